/**
 * What bench/wallet.ts checks after its runs: each wallet's ledger against the deposits the bench was
 * answered for (a 201, or a raw transaction committed). A bench whose figure counts deposits that did
 * not land, or misses ones that did, is worse than none.
 */
import type { Pool } from '../../src/store/pg/pool.js';

/** Per account: the effects answered as landed (deposits, legs) and their total in cents (exact in JS integers). */
export class AmountTally {
  private readonly byAccount = new Map<string, { count: number; cents: number }>();

  add(account: string, cents: number): void {
    const t = this.byAccount.get(account);
    if (t) {
      t.count++;
      t.cents += cents;
    } else this.byAccount.set(account, { count: 1, cents });
  }

  of(account: string): { count: number; cents: number } {
    return this.byAccount.get(account) ?? { count: 0, cents: 0 };
  }

  get total(): number {
    let n = 0;
    for (const t of this.byAccount.values()) n += t.count;
    return n;
  }
}

export interface LedgerCheck {
  accounts: number;
  /** Ledger not self-consistent: entries' sum ≠ last balance_after, seq not 1..n, or not one opening entry. */
  inconsistent: string[];
  /** Deposit entries ≠ deposits answered. */
  miscounted: string[];
  /** Sum of the deposit entries ≠ the amounts answered. */
  misadded: string[];
  /** Balance events in the outbox or idempotency records ≠ deposits answered. */
  unrecorded: string[];
}

/**
 * The columns of a query over practice_ledger grouped by router_account_id that say whether an
 * account's ledger holds together (ledgerShapeProblem reads them).
 */
export const LEDGER_SHAPE_COLUMNS = `count(*) AS entries, max(seq) AS max_seq,
              count(*) FILTER (WHERE type = 'opening_balance') AS openings,
              sum(amount) = (array_agg(balance_after ORDER BY seq DESC))[1] AS balanced`;

export interface LedgerShape {
  entries: number;
  max_seq: number;
  openings: number;
  balanced: boolean;
}

/** Why an account's ledger does not hold together (sum ≠ last balance_after, seq not 1..n, not one opening entry), or null. */
export function ledgerShapeProblem(id: string, r: LedgerShape): string | null {
  if (r.balanced && r.max_seq === r.entries && (r.entries === 0 || r.openings === 1)) return null;
  return `${id}: ${r.entries} entries, last seq ${r.max_seq}, ${r.openings} opening entries, sum ${r.balanced ? '=' : '≠'} last balance_after`;
}

interface LedgerRow extends LedgerShape {
  router_account_id: string;
  deposits: number;
  deposited_cents: string;
  outbox: number;
  records: number;
}

/** Reads every account's ledger, outbox events and idempotency records and compares them with `tally`. */
export async function checkLedgers(pool: Pool, accounts: readonly string[], tally: AmountTally): Promise<LedgerCheck> {
  const { rows } = await pool.query<LedgerRow>(
    `WITH l AS (
       SELECT router_account_id, ${LEDGER_SHAPE_COLUMNS},
              count(*) FILTER (WHERE type = 'deposit') AS deposits,
              (coalesce(sum(amount) FILTER (WHERE type = 'deposit'), 0) * 100)::numeric(40, 6)::text AS deposited_cents
         FROM practice_ledger WHERE router_account_id = ANY($1) GROUP BY router_account_id),
     o AS (SELECT router_account_id, count(*) AS n FROM account_outbox WHERE channel = 'balance' AND router_account_id = ANY($1) GROUP BY 1),
     k AS (SELECT router_account_id, count(*) AS n FROM idempotency_keys WHERE operation = 'paper.deposit' AND router_account_id = ANY($1) GROUP BY 1)
     SELECT a.id AS router_account_id, coalesce(l.entries, 0) AS entries, coalesce(l.max_seq, 0) AS max_seq, coalesce(l.openings, 0) AS openings,
            coalesce(l.balanced, true) AS balanced, coalesce(l.deposits, 0) AS deposits, coalesce(l.deposited_cents, '0') AS deposited_cents,
            coalesce(o.n, 0) AS outbox, coalesce(k.n, 0) AS records
       FROM unnest($1::text[]) AS a(id)
       LEFT JOIN l ON l.router_account_id = a.id LEFT JOIN o ON o.router_account_id = a.id LEFT JOIN k ON k.router_account_id = a.id`,
    [accounts],
  );
  const out: LedgerCheck = { accounts: rows.length, inconsistent: [], miscounted: [], misadded: [], unrecorded: [] };
  for (const r of rows) {
    const t = tally.of(r.router_account_id);
    const id = r.router_account_id;
    const shape = ledgerShapeProblem(id, r);
    if (shape) out.inconsistent.push(shape);
    if (r.deposits !== t.count) out.miscounted.push(`${id}: ${r.deposits} deposit entries, ${t.count} deposits answered`);
    if (r.deposited_cents !== `${t.cents}.000000`) out.misadded.push(`${id}: deposit entries add up to ${r.deposited_cents} cents, answered ${t.cents}`);
    if (r.outbox !== t.count || r.records !== t.count) out.unrecorded.push(`${id}: ${r.outbox} balance events, ${r.records} idempotency records, ${t.count} deposits answered`);
  }
  return out;
}

/**
 * The self-check (--tamper-check): one deposit entry written behind the bench's back, with a
 * balance_after off by a cent, so the ledger checks must fail on that account.
 */
export async function tamperLedger(pool: Pool, account: string): Promise<void> {
  await pool.query(
    `INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, description)
     SELECT $1, seq + 1, 'svl_bench_tamper', 'deposit', 1, balance_after + 1.01, 'bench --tamper-check'
       FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1`,
    [account],
  );
}
