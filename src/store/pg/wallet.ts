/**
 * The practice (ATLAS) wallet: its ledger is the only record of it. The balance is the newest
 * entry's balance_after, and each entry's balance_after is the previous one plus its amount,
 * computed by PostgreSQL in `numeric` (never a JS float), under a per-account lock, in the
 * caller's transaction with the effect that moved it. Every wallet opens with 1,000 ATLAS (an
 * opening_balance entry), the first time anything reads or moves it.
 */
import { newId } from '../../ids.js';
import type { Pool, PoolClient } from './pool.js';

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
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

interface EntryRow {
  ledger_id: string;
  type: PracticeEntryType;
  amount: string;
  balance_after: string;
  router_order_id: string | null;
  description: string | null;
  created_at: string;
}

/** A numeric's text as a JSON number: exact for the 2-6 decimals and the magnitudes a wallet holds. */
const toEntry = (r: EntryRow): PracticeEntry => ({ ...r, amount: Number(r.amount), balance_after: Number(r.balance_after) });

/** Opens the wallet with its 1,000 ATLAS unless it is open (safe to race: the opening entry is unique). */
export async function openWallet(db: Queryable, routerAccountId: string): Promise<void> {
  await db.query(
    `INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, description)
     VALUES ($1, 1, $2, 'opening_balance', $3::numeric, $3::numeric, 'Every practice wallet starts at 1,000 ATLAS')
     ON CONFLICT DO NOTHING`,
    [routerAccountId, newId('svl'), PRACTICE_OPENING_BALANCE],
  );
}

/** The balance as exact decimal text. */
export async function practiceBalance(db: Queryable, routerAccountId: string): Promise<string> {
  return (await practiceSnapshot(db, routerAccountId)).balance;
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

/**
 * Takes the account's wallet lock for the rest of the transaction `client` is in. FOR NO KEY UPDATE
 * on the account row: concurrent wallet changes of the account queue here, while inserts that only
 * reference the account (keys, models) are not held up.
 */
export async function lockWallet(client: PoolClient, routerAccountId: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM accounts WHERE router_account_id = $1 FOR NO KEY UPDATE', [routerAccountId]);
  if (!rowCount) return false;
  await openWallet(client, routerAccountId);
  return true;
}

export interface AppendInput {
  type: Exclude<PracticeEntryType, 'opening_balance'>;
  /** Exact decimal text; negative for debits. */
  amount: string;
  router_order_id?: string | null;
  description?: string | null;
}

/**
 * Appends one entry; call inside a transaction holding lockWallet. Returns it with its seq (the
 * practice connection's balance_version), or null (writing nothing) when the entry would take the
 * balance below zero or above `cap`.
 */
export async function appendPracticeEntry(client: PoolClient, routerAccountId: string, e: AppendInput, cap = String(PRACTICE_BALANCE_CAP)): Promise<{ entry: PracticeEntry; seq: number } | null> {
  const { rows } = await client.query<EntryRow & { seq: number }>(
    `WITH last AS (SELECT seq, balance_after FROM practice_ledger WHERE router_account_id = $1 ORDER BY seq DESC LIMIT 1)
     INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, router_order_id, description)
     SELECT $1, last.seq + 1, $2, $3, $4::numeric, last.balance_after + $4::numeric, $5, $6 FROM last
      WHERE last.balance_after + $4::numeric BETWEEN 0 AND $7::numeric
     RETURNING seq, ${ENTRY_COLUMNS}`,
    [routerAccountId, newId('svl'), e.type, e.amount, e.router_order_id ?? null, e.description ?? null, cap],
  );
  const r = rows[0];
  if (!r) return null;
  const { seq, ...entry } = r;
  return { entry: toEntry(entry), seq };
}
