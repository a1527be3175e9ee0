/**
 * Plans, their entitlements and their rate limits (spec "Limits"; OPERATOR-INTERFACE "Keys").
 * Pure data: the single place that says what a plan grants.
 */

export const PLANS = ['free', 'pro', 'scale', 'organization', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const KEY_TYPES = ['data', 'execution'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

export const ENVIRONMENTS = ['test', 'live'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** Every key of a workspace has these, whatever the plan. */
export const BASE_ENTITLEMENTS = ['reference:read', 'markets:read', 'account:read'] as const;

/**
 * Kits (docs/kits.md): each kit is read with its own kit:<slug>. The guide to placing and
 * reconciling orders is for every plan (any execution key may place practice orders); the guides
 * to streaming, price history and signals are for the plans that hold what they teach.
 */
const FREE_KITS = ['kit:orders-reconcile'] as const;
const PRO_KITS = ['kit:streaming-resume', 'kit:price-history', 'kit:signals-arbitrage'] as const;

const PRO_ADDS = [
  ...PRO_KITS,
  'ai:invoke',
  'stream:realtime',
  'depth:read',
  'gamestate:read',
  'pricing:history',
  'signals:read',
  'trades:read',
  'arbitrage:read',
] as const;
const SCALE_ADDS = ['stream:ticks'] as const;
const ORG_ADDS = ['connect:read', 'connect:write', 'connect:trade'] as const;

export const PLAN_ENTITLEMENTS: Record<Plan, readonly string[]> = {
  free: [...FREE_KITS],
  pro: [...FREE_KITS, ...PRO_ADDS],
  scale: [...FREE_KITS, ...PRO_ADDS, ...SCALE_ADDS],
  organization: [...FREE_KITS, ...PRO_ADDS, ...SCALE_ADDS, ...ORG_ADDS],
  enterprise: [...FREE_KITS, ...PRO_ADDS, ...SCALE_ADDS, ...ORG_ADDS],
};

export interface RateLimits {
  perMinute: number;
  perDay: number;
}

/** Spec table; "Organization (Enterprise)" is the `enterprise` plan. */
export const PLAN_RATE_LIMITS: Record<Plan, RateLimits> = {
  free: { perMinute: 60, perDay: 10_000 },
  pro: { perMinute: 300, perDay: 50_000 },
  scale: { perMinute: 1_000, perDay: 500_000 },
  organization: { perMinute: 600, perDay: 200_000 },
  enterprise: { perMinute: 1_200, perDay: 2_000_000 },
};

export const isPlan = (s: string): s is Plan => (PLANS as readonly string[]).includes(s);
export const isKeyType = (s: string): s is KeyType => (KEY_TYPES as readonly string[]).includes(s);
export const isEnvironment = (s: string): s is Environment => (ENVIRONMENTS as readonly string[]).includes(s);

/**
 * The entitlements a key holds: the plan's (or an explicit override list), plus the base read
 * entitlements, plus trade:execute for execution keys only. A data key never executes, even when an
 * override names trade:execute.
 */
export function keyEntitlements(plan: Plan, keyType: KeyType, override?: readonly string[]): string[] {
  const granted = new Set<string>([...BASE_ENTITLEMENTS, ...(override ?? PLAN_ENTITLEMENTS[plan])]);
  if (keyType === 'execution') granted.add('trade:execute');
  else granted.delete('trade:execute');
  return [...granted].sort();
}

/** The spec writes two scopes two ways; both spellings name the same entitlement. */
const ALIASES: Record<string, string> = { price_history: 'pricing:history', account_read: 'account:read' };
export const canonicalEntitlement = (e: string): string => ALIASES[e] ?? e;

export function missingEntitlements(held: ReadonlySet<string>, required: readonly string[]): string[] {
  return required.map(canonicalEntitlement).filter((e) => !held.has(e));
}

/** Monthly reasoning-credit allowance by plan (spends on the MCP `ask` tool and AI calls on managed credits; src/store/pg/credits.ts). */
export const PLAN_CREDITS_PER_MONTH: Record<Plan, number> = {
  free: 0,
  pro: 100,
  scale: 1_000,
  organization: 1_000,
  enterprise: 10_000,
};
