/** Venue price units and grids live in the domain (the order checks share them); re-exported for the adapters. */
export * from '../domain/prices.js';
