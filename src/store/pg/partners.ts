/**
 * A user's venue connections (account_partners) and their balances (docs/balances.md).
 *
 * - `balance` is the venue's last snapshot (at balance_as_of, the venue's own time). A snapshot
 *   lands only when it is newer than the stored one (or as new and different): a late read never
 *   takes a balance back in time. Each landing bumps balance_version and writes its balance.update
 *   event to the outbox, in one transaction.
 * - `expected_balance` is the snapshot plus every balance_ledger row (holds negative, releases and
 *   settlements positive) written after balance_as_of, summed by PostgreSQL in `numeric`: exact,
 *   and computed from the rows, never a counter that could drift. pending = expected − balance.
 * - A connection whose venue reports no balance (balance_source NULL) shows null for all three.
 * - Totals are USD: every venue connection is in USD; the practice wallet (ATLAS) is never added in.
 */
import { BALANCE_STALE_AFTER_MS, FUNDING, PRACTICE_PARTNER_ID, practiceAccountPartnerId, type AccountPartner, type BalanceUpdateEvent } from '../../domain/account.js';
import { USER_GRANTS, type UserGrant } from '../../domain/execution-limits.js';
import { newId } from '../../ids.js';
import { enqueueAccountEvent } from './outbox.js';
import { inTransaction, type Pool, type PoolClient } from './pool.js';
import { practiceSnapshot } from './wallet.js';

type Queryable = Pool | PoolClient;
type CredentialStatus = AccountPartner['credential_status'];

export const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** What moved on connection `ap` after its snapshot (0 without one): the ledger is the only record. */
export const sinceSnapshot = (ap: string) =>
  `coalesce((SELECT sum(b.amount) FROM balance_ledger b WHERE b.account_partner_id = ${ap}.account_partner_id AND b.created_at > ${ap}.balance_as_of), 0)`;

/** A numeric's text as a JSON number: exact for the 6 decimals and the magnitudes a balance holds. */
const num = (t: string | null): number | null => (t === null ? null : Number(t));

export interface VenueConnections {
  /** The venue connections (USD), in the catalog's partner order. */
  connections: AccountPartner[];
  /** Sum of the shown balances (connections without a figure add nothing), USD. */
  usd_total: number;
  usd_expected_total: number;
}

interface ConnectionRow {
  account_partner_id: string;
  partner_id: string;
  partner_name: string;
  status: string;
  credential_status: CredentialStatus;
  balance_source: 'venue_api' | null;
  logo_url: string;
  internal_book: boolean;
  balance: string | null;
  expected_balance: string | null;
  pending: string | null;
  balance_as_of: string | null;
  is_stale: boolean;
  usd_total: string;
  usd_expected_total: string;
}

/** The account's venue connections with their balances as of `nowMs` (is_stale is relative to it). */
export async function venueConnections(db: Queryable, routerAccountId: string, nowMs: number): Promise<VenueConnections> {
  const { rows } = await db.query<ConnectionRow>(
    `WITH c AS (
       SELECT ap.*,
              CASE WHEN ap.balance_source IS NULL THEN NULL ELSE ap.balance END AS shown,
              CASE WHEN ap.balance_source IS NULL OR ap.balance IS NULL THEN NULL ELSE ${sinceSnapshot('ap')} END AS since
         FROM account_partners ap
        WHERE ap.router_account_id = $1
     )
     SELECT c.account_partner_id, c.partner_id, coalesce(p.name, c.partner_id) AS partner_name, c.status, c.credential_status,
            c.balance_source, coalesce(p.logo_url, '') AS logo_url, coalesce(p.internal_book, false) AS internal_book,
            c.shown::text AS balance, (c.shown + c.since)::text AS expected_balance, c.since::text AS pending,
            ${iso('c.balance_as_of')} AS balance_as_of,
            (c.balance_as_of IS NULL OR c.balance_as_of < $2::timestamptz) AS is_stale,
            coalesce(sum(c.shown) OVER (), 0)::text AS usd_total,
            coalesce(sum(c.shown + c.since) OVER (), 0)::text AS usd_expected_total
       FROM c LEFT JOIN partners p ON p.partner_id = c.partner_id
      ORDER BY coalesce(p.sort_order, 2147483647), c.partner_id`,
    [routerAccountId, new Date(nowMs - BALANCE_STALE_AFTER_MS).toISOString()],
  );
  return {
    connections: rows.map((r) => ({
      account_partner_id: r.account_partner_id,
      partner_id: r.partner_id,
      partner_name: r.partner_name,
      status: r.status,
      credential_status: r.credential_status,
      currency: FUNDING.USD.currency,
      balance: num(r.balance),
      expected_balance: num(r.expected_balance),
      pending: num(r.pending),
      balance_as_of: r.balance_as_of,
      is_stale: r.is_stale,
      balance_source: r.balance_source,
      logo_url: r.logo_url,
      internal_book: r.internal_book,
    })),
    usd_total: Number(rows[0]?.usd_total ?? 0),
    usd_expected_total: Number(rows[0]?.usd_expected_total ?? 0),
  };
}

/** An account's connection to a venue as the order checks read it: access, and its money as exact text. */
export interface VenueAccessRow {
  partner_id: string;
  status: string;
  credential_status: CredentialStatus;
  /** The expected balance (snapshot net of what moved since), exact; null without a figure (no snapshot, or a venue that reports none). */
  expected_balance: string | null;
  /** The snapshot is older than the refresh SLA (never true with a null figure). */
  is_stale: boolean;
}

/** The account's connections to `partnerIds`, with their expected balances as of `nowMs`; read only. */
export async function venueAccess(db: Queryable, routerAccountId: string, partnerIds: readonly string[], nowMs: number): Promise<VenueAccessRow[]> {
  if (partnerIds.length === 0) return [];
  const { rows } = await db.query<VenueAccessRow>(
    `SELECT ap.partner_id, ap.status, ap.credential_status,
            CASE WHEN ap.balance_source IS NULL OR ap.balance IS NULL THEN NULL ELSE (ap.balance + ${sinceSnapshot('ap')})::text END AS expected_balance,
            (ap.balance_source IS NOT NULL AND ap.balance IS NOT NULL AND ap.balance_as_of < $3::timestamptz) AS is_stale
       FROM account_partners ap
      WHERE ap.router_account_id = $1 AND ap.partner_id = ANY($2::text[])`,
    [routerAccountId, partnerIds, new Date(nowMs - BALANCE_STALE_AFTER_MS).toISOString()],
  );
  return rows;
}

/**
 * The practice wallet as a connection of every account: its balance is the practice ledger (exact,
 * never stale, nothing pending: an ATLAS order moves the ledger itself).
 */
export async function practiceConnection(db: Queryable, routerAccountId: string): Promise<AccountPartner> {
  const snap = await practiceSnapshot(db, routerAccountId);
  const { rows } = await db.query<{ name: string; logo_url: string; internal_book: boolean }>('SELECT name, logo_url, internal_book FROM partners WHERE partner_id = $1', [PRACTICE_PARTNER_ID]);
  const balance = Number(snap.balance);
  return {
    account_partner_id: practiceAccountPartnerId(routerAccountId),
    partner_id: PRACTICE_PARTNER_ID,
    partner_name: rows[0]?.name ?? FUNDING.ATLAS.label,
    status: 'active',
    credential_status: 'connected',
    currency: FUNDING.ATLAS.currency,
    balance,
    expected_balance: balance,
    pending: 0,
    balance_as_of: snap.as_of,
    is_stale: false,
    balance_source: 'svc_wallet',
    logo_url: rows[0]?.logo_url ?? '',
    internal_book: rows[0]?.internal_book ?? true,
  };
}

export async function accountExists(db: Queryable, routerAccountId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM accounts WHERE router_account_id = $1', [routerAccountId]);
  return rowCount === 1;
}

/** A venue's balance reading: USD figures as the venue reported them, at its own time. */
export interface VenueSnapshot {
  balance: number;
  held: number;
  /** Unix ms, the venue's time of the figure. */
  ts_event: number;
}

/** A connection's balance as an event reports it, right after the change (exact text). */
interface ChangedConnection {
  account_partner_id: string;
  router_account_id: string;
  partner_id: string;
  balance_version: number;
  balance: string;
  expected: string;
  pending: string;
  balance_as_of: string;
}

/** The connection's figures after a change, as RETURNING reads them (`ap` the updated row). */
const CHANGED_CONNECTION = `ap.account_partner_id, ap.router_account_id, ap.partner_id, ap.balance_version, ap.balance::text AS balance,
  (ap.balance + ${sinceSnapshot('ap')})::text AS expected, ${sinceSnapshot('ap')}::text AS pending, ${iso('ap.balance_as_of')} AS balance_as_of`;

/** Writes the change's balance.update to the outbox (in the caller's transaction) and returns it. */
async function balanceChanged(client: PoolClient, r: ChangedConnection, cause: BalanceUpdateEvent['cause'], routerOrderId: string | null, timestamp: string): Promise<BalanceUpdateEvent> {
  const event: BalanceUpdateEvent = {
    type: 'balance.update',
    account_partner_id: r.account_partner_id,
    partner_id: r.partner_id,
    currency: 'USD',
    balance: Number(r.expected),
    venue_balance: Number(r.balance),
    pending: Number(r.pending),
    balance_version: r.balance_version,
    balance_as_of: r.balance_as_of,
    cause,
    router_order_id: routerOrderId,
    timestamp,
  };
  await enqueueAccountEvent(client, r.router_account_id, 'balance', event);
  return event;
}

/**
 * Lands `snap` on the connection unless the stored snapshot is newer (or as new and the same), in
 * the caller's transaction: the row, its version and its balance.update event (cause refresh)
 * together. Returns the event, or null when nothing landed.
 */
export async function landSnapshot(client: PoolClient, accountPartnerId: string, snap: VenueSnapshot, nowMs: number): Promise<BalanceUpdateEvent | null> {
  const asOf = new Date(snap.ts_event).toISOString();
  const { rows } = await client.query<ChangedConnection>(
    `UPDATE account_partners ap
        SET balance = $2::numeric, venue_held = $3::numeric, balance_as_of = $4::timestamptz, balance_version = ap.balance_version + 1, updated_at = now()
      WHERE ap.account_partner_id = $1 AND ap.balance_source IS NOT NULL
        AND (ap.balance_as_of IS NULL OR ap.balance_as_of < $4::timestamptz
             OR (ap.balance_as_of = $4::timestamptz AND (ap.balance, ap.venue_held) IS DISTINCT FROM ($2::numeric, $3::numeric)))
      RETURNING ${CHANGED_CONNECTION}`,
    [accountPartnerId, String(snap.balance), String(snap.held), asOf],
  );
  return rows[0] ? balanceChanged(client, rows[0], 'refresh', null, new Date(nowMs).toISOString()) : null;
}

export interface SettlementCredit {
  routerAccountId: string;
  partnerId: string;
  routerOrderId: string;
  /** Exact decimal text, positive: what the venue pays the order back. */
  amount: string;
  /** ISO 8601, the settlement's instant (the event's timestamp). */
  at: string;
}

/**
 * A real order's settlement on its venue connection, in the caller's transaction: a balance_ledger
 * row (kind settlement, positive), so expected_balance moves by it until a snapshot that includes it
 * lands; the connection's version; and its balance.update (cause settlement) when the connection
 * shows a figure (a venue that reports no balance, or no snapshot yet, has none to show).
 * `connection` false when the account has no connection to the venue (nothing written).
 */
export async function landSettlement(client: PoolClient, c: SettlementCredit): Promise<{ connection: boolean; event: BalanceUpdateEvent | null }> {
  const entry = await client.query<{ account_partner_id: string }>(
    `INSERT INTO balance_ledger (account_partner_id, kind, amount, router_order_id)
     SELECT account_partner_id, 'settlement', $3::numeric, $4 FROM account_partners WHERE router_account_id = $1 AND partner_id = $2
     RETURNING account_partner_id`,
    [c.routerAccountId, c.partnerId, c.amount, c.routerOrderId],
  );
  if (!entry.rows[0]) return { connection: false, event: null };
  // A second statement: the figures read here include the row just written.
  const { rows } = await client.query<ChangedConnection & { shown: boolean }>(
    `UPDATE account_partners ap SET balance_version = ap.balance_version + 1, updated_at = now()
      WHERE ap.account_partner_id = $1
     RETURNING ${CHANGED_CONNECTION}, (ap.balance_source IS NOT NULL AND ap.balance IS NOT NULL) AS shown`,
    [entry.rows[0].account_partner_id],
  );
  const r = rows[0]!;
  return { connection: true, event: r.shown ? await balanceChanged(client, r, 'settlement', c.routerOrderId, c.at) : null };
}

/** landSnapshot in its own transaction. */
export const recordSnapshot = (pool: Pool, accountPartnerId: string, snap: VenueSnapshot, nowMs: number): Promise<BalanceUpdateEvent | null> =>
  inTransaction(pool, (c) => landSnapshot(c, accountPartnerId, snap, nowMs));

export interface ConnectInput {
  routerAccountId: string;
  partnerId: string;
  credentialStatus: CredentialStatus;
  /** The venue's adapter declares balances (balance_source venue_api); false records NULL. */
  reportsBalance: boolean;
  /** The balance read at connect time, when the venue reports one. */
  snapshot: VenueSnapshot | null;
  /** The user's grants on this connection; undefined keeps a reconnected one's and gives a new one every grant. */
  scopes?: readonly UserGrant[];
}

/**
 * Records a connection as the hosted flow leaves it (active, with its credential status and the
 * user's grants) and lands its first (or a newer) snapshot, in one transaction. The account must
 * exist (a foreign key).
 */
export async function recordConnection(pool: Pool, input: ConnectInput, nowMs: number): Promise<{ account_partner_id: string; scopes: UserGrant[]; event: BalanceUpdateEvent | null }> {
  return inTransaction(pool, async (c) => {
    const { rows } = await c.query<{ account_partner_id: string; scopes: UserGrant[] }>(
      `INSERT INTO account_partners (account_partner_id, router_account_id, partner_id, credential_status, balance_source, scopes)
       VALUES ($1, $2, $3, $4, $5, coalesce($6::text[], $7::text[]))
       ON CONFLICT (router_account_id, partner_id) DO UPDATE
         SET status = 'active', credential_status = EXCLUDED.credential_status, balance_source = EXCLUDED.balance_source,
             scopes = coalesce($6::text[], account_partners.scopes), updated_at = now()
       RETURNING account_partner_id, scopes`,
      [newId('ap'), input.routerAccountId, input.partnerId, input.credentialStatus, input.reportsBalance ? 'venue_api' : null, input.scopes ?? null, USER_GRANTS],
    );
    const id = rows[0]!.account_partner_id;
    const event = input.snapshot && input.reportsBalance ? await landSnapshot(c, id, input.snapshot, nowMs) : null;
    return { account_partner_id: id, scopes: rows[0]!.scopes, event };
  });
}

/** A connection whose balance a refresher is to read. */
export interface RefreshTarget {
  account_partner_id: string;
  router_account_id: string;
  partner_id: string;
}

/** Connections a refresh reads: active, credentials validated, on a venue that reports a balance. */
const REFRESHABLE = `status = 'active' AND credential_status = 'connected' AND balance_source IS NOT NULL`;

/** The account's refreshable connections on `partnerIds`, marked tried at `nowMs`. */
export async function accountRefreshTargets(pool: Pool, routerAccountId: string, partnerIds: readonly string[], nowMs: number): Promise<RefreshTarget[]> {
  const { rows } = await pool.query<RefreshTarget>(
    `UPDATE account_partners SET balance_checked_at = $3::timestamptz
      WHERE router_account_id = $1 AND partner_id = ANY($2::text[]) AND ${REFRESHABLE}
      RETURNING account_partner_id, router_account_id, partner_id`,
    [routerAccountId, partnerIds, new Date(nowMs).toISOString()],
  );
  return rows;
}

/**
 * Claims up to `limit` refreshable connections on `partnerIds` not tried within `everyMs`, tried
 * longest ago first, marking them tried at `nowMs`. SKIP LOCKED: schedulers in several processes
 * split the due connections instead of reading the same ones.
 */
export async function claimDueRefreshes(pool: Pool, opts: { partnerIds: readonly string[]; nowMs: number; everyMs: number; limit: number }): Promise<RefreshTarget[]> {
  const { rows } = await pool.query<RefreshTarget>(
    `WITH due AS (
       SELECT account_partner_id FROM account_partners
        WHERE ${REFRESHABLE} AND partner_id = ANY($1::text[]) AND (balance_checked_at IS NULL OR balance_checked_at <= $3::timestamptz)
        ORDER BY balance_checked_at NULLS FIRST, account_partner_id
        LIMIT $4
        FOR UPDATE SKIP LOCKED
     )
     UPDATE account_partners ap SET balance_checked_at = $2::timestamptz FROM due
      WHERE ap.account_partner_id = due.account_partner_id
     RETURNING ap.account_partner_id, ap.router_account_id, ap.partner_id`,
    [opts.partnerIds, new Date(opts.nowMs).toISOString(), new Date(opts.nowMs - opts.everyMs).toISOString(), opts.limit],
  );
  return rows;
}
