/**
 * Reasoning credits (spec "Caller context": credits): the one place that spends them and reads what
 * is left. Spent by AI pass-through calls on managed credits (docs/ai.md) and by the MCP `ask` tool;
 * shown by GET /auth/me.
 *
 * - The pool is the workspace's, per UTC calendar month (`period`, the month's first day): every key
 *   and account of a workspace spends from it, as they share the rate-limit pool.
 * - The allowance is the asking key's plan's (PLAN_CREDITS_PER_MONTH). There is no way to buy
 *   credits in this build, so `purchased` is 0 and `total` the allowance.
 * - A spend is one upsert that refuses to go past the total, so concurrent spends never overdraw.
 *   A spend whose call then fails (the provider refused or was unreachable) is refunded.
 */
import { ApiError } from '../../errors.js';
import { PLAN_CREDITS_PER_MONTH, type Plan } from '../../domain/plans.js';
import type { Pool } from './pool.js';

/** `credits` of GET /auth/me. */
export interface Credits {
  allowance: number;
  purchased: number;
  total: number;
  included_per_month: number;
  used_this_period: number;
}

/** A spend that went through: what a refund gives back. */
export interface CreditSpend {
  workspaceId: string;
  period: string;
  amount: number;
}

export type SpendResult = { ok: true; spend: CreditSpend; credits: Credits } | { ok: false; credits: Credits };

/** The period an instant falls in: the first day of its UTC month, `YYYY-MM-01`. */
export function creditPeriod(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 7)}-01`;
}

function creditsFor(plan: Plan, used: number): Credits {
  const allowance = PLAN_CREDITS_PER_MONTH[plan];
  const purchased = 0;
  return { allowance, purchased, total: allowance + purchased, included_per_month: allowance, used_this_period: used };
}

/** What the workspace has spent this period, against the plan's allowance. */
export async function creditsOf(pool: Pool, workspaceId: string, plan: Plan, nowMs: number): Promise<Credits> {
  const { rows } = await pool.query<{ used: number }>('SELECT used FROM credit_usage WHERE workspace_id = $1 AND period = $2', [workspaceId, creditPeriod(nowMs)]);
  return creditsFor(plan, rows[0]?.used ?? 0);
}

/** Spends `amount` credits (a positive integer) if the period's total allows it, atomically. */
export async function spendCredits(pool: Pool, input: { workspaceId: string; plan: Plan; amount: number; nowMs: number }): Promise<SpendResult> {
  const { workspaceId, plan, amount, nowMs } = input;
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`a credit spend is a positive integer, got ${amount}`);
  const period = creditPeriod(nowMs);
  const total = creditsFor(plan, 0).total;
  if (amount <= total) {
    const { rows } = await pool.query<{ used: number }>(
      `INSERT INTO credit_usage (workspace_id, period, used) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, period) DO UPDATE SET used = credit_usage.used + EXCLUDED.used, updated_at = now()
         WHERE credit_usage.used + EXCLUDED.used <= $4
       RETURNING used`,
      [workspaceId, period, amount, total],
    );
    if (rows[0]) return { ok: true, spend: { workspaceId, period, amount }, credits: creditsFor(plan, rows[0].used) };
  }
  return { ok: false, credits: await creditsOf(pool, workspaceId, plan, nowMs) };
}

/** Gives a spend back (its call did not happen). Never below zero. */
export async function refundCredits(pool: Pool, spend: CreditSpend): Promise<void> {
  await pool.query('UPDATE credit_usage SET used = greatest(used - $3, 0), updated_at = now() WHERE workspace_id = $1 AND period = $2', [spend.workspaceId, spend.period, spend.amount]);
}

/** 402 credits_exhausted: the period's credits are spent (or the plan includes none). */
export function creditsExhausted(credits: Credits): ApiError {
  return new ApiError(
    402,
    'credits_exhausted',
    credits.total === 0
      ? 'this plan includes no reasoning credits; link your own provider key or move to a plan with credits'
      : `this month's ${credits.total} reasoning credits are spent; they renew on the first day of next month (UTC), or link your own provider key`,
    { allowance: credits.allowance, purchased: credits.purchased, used_this_period: credits.used_this_period },
  );
}
