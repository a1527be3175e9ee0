/**
 * Models and opportunities (spec "Model", "Opportunity"): the labels orders are filed under and the
 * groups of related orders inside them. Shapes and rules only, no I/O.
 */
import type { Currency } from './account.js';
import type { RouterOrder } from './router-orders.js';

export const MODEL_STATUSES = ['active', 'archived'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

/** Spec "Limits": archived models do not count, so archiving one frees a place. */
export const MAX_ACTIVE_MODELS = 50;

export const MODEL_NAME_MAX = 100;
export const MODEL_DESCRIPTION_MAX = 2000;

export interface Model {
  model_id: string;
  model_name: string;
  model_description: string;
  league_id: string | null;
  /** The league's name as the catalog has it now; null with no league. */
  league_name: string | null;
  status: ModelStatus;
  created_at: string;
  /** Moves only when a value changes (a PATCH with the same values, a repeated archive leave it). */
  updated_at: string;
}

export interface Opportunity {
  opportunity_id: string;
  /** Null when the buy that opened it named no model. */
  model_id: string | null;
  model_name: string | null;
  currency: Currency;
  /** The opportunity's orders, oldest first. */
  legs: RouterOrder[];
  created_at: string;
}
