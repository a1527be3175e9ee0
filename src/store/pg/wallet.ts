/**
 * The practice (ATLAS) wallet: its ledger is the only record of it. The balance is the newest
 * entry's balance_after, and each entry's balance_after is the previous one plus its amount,
 * computed by PostgreSQL in `numeric` (never a JS float), under a per-account lock, in the
 * caller's transaction with the effect that moved it. Every wallet opens with 1,000 ATLAS (an
 * opening_balance entry), the first time anything reads or moves it.
 */
import { newId } from '../../ids.js';
import type { Pool, PoolClient } from './pool.js';
import { isoUtc } from './sql.js';

export const PRACTICE_OPENING_BALANCE = '1000';
export const PRACTICE_MAX_DEPOSIT = 100_000;
export const PRACTICE_BALANCE_CAP = 10_000_000;

export type PracticeEntryType = 'opening_balance' | 'bet_debit' | 'settlement_credit' | 'refund' | 'adjustment' | 'deposit';

export interface PracticeEntry {
  ledger_id: string;
  type: PracticeEntryType;
  amount: number;
  balance_after: number;
  router_order_id: string | null;
  description: string | null;
  created_at: string;
}

type Queryable = Pool | PoolClient;

const ENTRY_COLUMNS = `ledger_id, type, amount::text AS amount, balance_after::text AS balance_after, router_order_id, description,
  ${isoUtc('created_at')} AS created_at`;

export interface EntryRow {
  ledger_id: string;
  type: PracticeEntryType;
  amount: string;
  balance_after: string;
  router_order_id: string | null;
  description: string | null;
  created_at: string;
}

/** A numeric's text as a JSON number: exact for the 2-6 decimals and the magnitudes a wallet holds. */
export const toEntry = (r: EntryRow): PracticeEntry => ({ ...r, amount: Number(r.amount), balance_after: Number(r.balance_after) });

/** Opens the wallet with its 1,000 ATLAS unless it is open (flow_practice_open, migration 5). */
export async function openWallet(db: Queryable, routerAccountId: string): Promise<void> {
  await db.query('SELECT flow_practice_open($1, $2, $3)', [routerAccountId, newId('svl'), PRACTICE_OPENING_BALANCE]);
}

/** The balance as exact decimal text. */
export async function practiceBalance(db: Queryable, routerAccountId: string): Promise<string> {
  return (await practiceSnapshot(db, routerAccountId)).balance;
}

/**
 * The balance as exact decimal text, read only: a wallet not opened yet reads its opening balance
 * and stays unopened (preflight writes nothing).
 */
export async function practiceBalanceReadOnly(db: Queryable, routerAccountId: string): Promise<string> {
  const { rows } = await db.query<{ balance: string }>('SELECT balance_after::text AS balance FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1', [routerAccountId]);
  return rows[0]?.balance ?? PRACTICE_OPENING_BALANCE;
}

/** The balance (exact decimal text), when it last moved, and its version (the newest entry's seq). */
export async function practiceSnapshot(db: Queryable, routerAccountId: string): Promise<{ balance: string; as_of: string; seq: number }> {
  await openWallet(db, routerAccountId);
  const { rows } = await db.query<{ balance: string; as_of: string; seq: number }>(
    `SELECT balance_after::text AS balance, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS as_of, seq
       FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1`,
    [routerAccountId],
  );
  return rows[0]!;
}

/** Newest first. */
export async function practiceLedger(db: Queryable, routerAccountId: string, limit: number): Promise<PracticeEntry[]> {
  await openWallet(db, routerAccountId);
  const { rows } = await db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT $2`,
    [routerAccountId, limit],
  );
  return rows.map(toEntry);
}

export interface AppendInput {
  type: Exclude<PracticeEntryType, 'opening_balance'>;
  /** Exact decimal text; negative for debits. */
  amount: string;
  router_order_id?: string | null;
  description?: string | null;
}

export type AppendOutcome = { outcome: 'ok'; ledger_id: string; seq: number; balance_after: string; created_at: string } | { outcome: 'no_account' | 'out_of_bounds' };

/**
 * Appends one entry in the caller's transaction (flow_practice_append, migration 5): takes the
 * account's lock, opens the wallet if needed and computes balance_after from the newest entry in
 * numeric. `out_of_bounds` (nothing written) when it would take the balance below zero or above
 * `cap` (null: no cap, for money the wallet is owed, as a settlement's). seq is the practice
 * connection's balance_version.
 */
export async function appendPracticeEntry(client: PoolClient, routerAccountId: string, e: AppendInput, cap: string | null = String(PRACTICE_BALANCE_CAP)): Promise<AppendOutcome> {
  const ledgerId = newId('svl');
  const { rows } = await client.query<{ outcome: 'ok' | 'no_account' | 'out_of_bounds'; seq: number; balance_after: string; created_at: string }>(
    `SELECT outcome, seq, balance_after::text AS balance_after, ${isoUtc('created_at')} AS created_at
       FROM flow_practice_append($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [routerAccountId, ledgerId, e.type, e.amount, e.router_order_id ?? null, e.description ?? null, cap, newId('svl'), PRACTICE_OPENING_BALANCE],
  );
  const r = rows[0]!;
  return r.outcome === 'ok' ? { outcome: 'ok', ledger_id: ledgerId, seq: r.seq, balance_after: r.balance_after, created_at: r.created_at } : { outcome: r.outcome };
}

export interface DepositInput {
  routerAccountId: string;
  key: string;
  fingerprint: string;
  /** Exact decimal text. */
  amount: string;
  description: string | null;
  /** The balance event's fixed fields; the balance, its version and as-of are filled in by the store. */
  event: object;
  /** The 201 envelope's meta. */
  meta: object;
  ttlMs: number;
}

/**
 * A practice deposit whole, in one statement and so one transaction and one round trip
 * (flow_practice_deposit, migration 5): the key's claim, the entry, its balance event in the outbox,
 * the key's record. `response` is the 201 body (or the first answer, replayed).
 */
export async function practiceDeposit(pool: Pool, d: DepositInput): Promise<DepositResult> {
  const { rows } = await pool.query<DepositResult>(PRACTICE_DEPOSIT_SQL, depositParams(d));
  return rows[0]!;
}

export type DepositResult = { outcome: 'created' | 'replay' | 'reused' | 'in_use' | 'no_account' | 'balance_cap'; status_code: number | null; response: string | null };

/** The deposit's one statement and its parameters (bench wallet's raw baseline sends exactly these). */
export const PRACTICE_DEPOSIT_SQL = 'SELECT * FROM flow_practice_deposit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)';
export function depositParams(d: DepositInput): unknown[] {
  return [d.routerAccountId, d.key, d.fingerprint, newId('svl'), d.amount, d.description, String(PRACTICE_BALANCE_CAP), newId('svl'), PRACTICE_OPENING_BALANCE, JSON.stringify(d.event), JSON.stringify(d.meta), d.ttlMs];
}
