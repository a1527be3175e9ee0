/**
 * What bench/orders.ts checks after its runs: each account's wallet, orders, events and
 * Idempotency-Key records against the legs the bench was answered for (a completed leg in a 200, or
 * a raw job whose transaction committed). A figure that counts legs that did not land, or misses
 * ones that did, is worse than none.
 */
import type { Pool } from '../../src/store/pg/pool.js';
import { LEDGER_SHAPE_COLUMNS, ledgerShapeProblem, type AmountTally, type LedgerShape } from './wallet-ledgers.js';

export interface OrdersCheck {
  accounts: number;
  /** Ledger not self-consistent: entries' sum ≠ last balance_after, seq not 1..n, or not one opening entry. */
  inconsistent: string[];
  /** bet_debit entries, or their sum, ≠ the legs answered and their stakes. */
  debits: string[];
  /** Order rows, their stakes, or the debits naming one of them ≠ the legs answered. */
  orders: string[];
  /** orders events, order_hold balance events, or orders.buy Idempotency-Key records ≠ the legs answered. */
  unrecorded: string[];
}

interface Row extends LedgerShape {
  router_account_id: string;
  debits: number;
  debited_cents: string;
  orders: number;
  ordered_cents: string;
  debits_with_order: number;
  order_events: number;
  hold_events: number;
  records: number;
}

const cents = (sum: string) => `(coalesce(${sum}, 0) * 100)::numeric(40, 6)::text`;

/** Reads every account's records and compares them with `legs` (per account: legs landed and their stakes in cents); findings in the order of `accounts`. */
export async function checkOrders(pool: Pool, accounts: readonly string[], legs: AmountTally): Promise<OrdersCheck> {
  const { rows } = await pool.query<Row>(
    `WITH l AS (
       SELECT router_account_id, ${LEDGER_SHAPE_COLUMNS},
              count(*) FILTER (WHERE type = 'bet_debit') AS debits,
              ${cents("-sum(amount) FILTER (WHERE type = 'bet_debit')")} AS debited_cents
         FROM practice_ledger WHERE router_account_id = ANY($1) GROUP BY router_account_id),
     o AS (SELECT router_account_id, count(*) AS n, ${cents('sum(amount)')} AS stake_cents
             FROM orders WHERE router_account_id = ANY($1) GROUP BY 1),
     d AS (SELECT l.router_account_id, count(*) AS n
             FROM practice_ledger l JOIN orders o ON o.router_order_id = l.router_order_id AND o.router_account_id = l.router_account_id
            WHERE l.type = 'bet_debit' AND l.router_account_id = ANY($1) GROUP BY 1),
     e AS (SELECT router_account_id, count(*) FILTER (WHERE channel = 'orders') AS orders,
                  count(*) FILTER (WHERE channel = 'balance' AND event->>'cause' = 'order_hold') AS holds
             FROM account_outbox WHERE router_account_id = ANY($1) GROUP BY 1),
     k AS (SELECT router_account_id, count(*) AS n FROM idempotency_keys WHERE operation = 'orders.buy' AND router_account_id = ANY($1) GROUP BY 1)
     SELECT a.id AS router_account_id, coalesce(l.entries, 0) AS entries, coalesce(l.max_seq, 0) AS max_seq, coalesce(l.openings, 0) AS openings,
            coalesce(l.balanced, true) AS balanced, coalesce(l.debits, 0) AS debits, coalesce(l.debited_cents, ${cents('NULL')}) AS debited_cents,
            coalesce(o.n, 0) AS orders, coalesce(o.stake_cents, ${cents('NULL')}) AS ordered_cents, coalesce(d.n, 0) AS debits_with_order,
            coalesce(e.orders, 0) AS order_events, coalesce(e.holds, 0) AS hold_events, coalesce(k.n, 0) AS records
       FROM unnest($1::text[]) WITH ORDINALITY AS a(id, n)
       LEFT JOIN l ON l.router_account_id = a.id LEFT JOIN o ON o.router_account_id = a.id LEFT JOIN d ON d.router_account_id = a.id
       LEFT JOIN e ON e.router_account_id = a.id LEFT JOIN k ON k.router_account_id = a.id
      ORDER BY a.n`,
    [accounts],
  );
  const out: OrdersCheck = { accounts: rows.length, inconsistent: [], debits: [], orders: [], unrecorded: [] };
  for (const r of rows) {
    const t = legs.of(r.router_account_id);
    const id = r.router_account_id;
    const answered = `${t.count} legs answered (${t.cents} cents)`;
    const shape = ledgerShapeProblem(id, r);
    if (shape) out.inconsistent.push(shape);
    if (r.debits !== t.count || r.debited_cents !== `${t.cents}.000000`) out.debits.push(`${id}: ${r.debits} bet_debit entries of ${r.debited_cents} cents, ${answered}`);
    if (r.orders !== t.count || r.ordered_cents !== `${t.cents}.000000` || r.debits_with_order !== t.count) {
      out.orders.push(`${id}: ${r.orders} orders staking ${r.ordered_cents} cents, ${r.debits_with_order} debits naming one, ${answered}`);
    }
    if (r.order_events !== t.count || r.hold_events !== t.count || r.records !== t.count) {
      out.unrecorded.push(`${id}: ${r.order_events} order events, ${r.hold_events} order_hold balance events, ${r.records} idempotency records, ${answered}`);
    }
  }
  return out;
}
