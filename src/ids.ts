/** Opaque identifiers and secrets minted by the service. */
import { createHash, randomBytes } from 'node:crypto';

export const newId = (prefix: string, bytes = 12): string => `${prefix}_${randomBytes(bytes).toString('base64url')}`;

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** An API key shows its environment so a leaked one is easy to triage; the rest is 192 random bits. */
export const newApiKey = (environment: 'test' | 'live'): string => `flow_${environment}_${randomBytes(24).toString('base64url')}`;
