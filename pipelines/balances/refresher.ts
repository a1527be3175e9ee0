/**
 * Re-reads connected venues' balances through their adapters and lands them (docs/balances.md):
 * the refresh call reads one account's connections, the scheduler role the connections due across
 * every account. It reads balances only: credentials and credential_status are the hosted flow's.
 *
 * It needs the venue adapters, which live in the ingest role's process: `flow all` hands it that
 * role's adapters (cli/roles/start.ts).
 */
import { BALANCE_REFRESH_EVERY_MS } from '../../src/domain/account.js';
import type { Logger } from '../../src/log.js';
import { accountRefreshTargets, claimDueRefreshes, recordSnapshot, type RefreshTarget, type VenueSnapshot } from '../../src/store/pg/partners.js';
import type { Pool } from '../../src/store/pg/pool.js';
import { VenueError, VenueErrorCodes } from '../../src/venues/errors.js';
import type { VenueAdapter, VenueBalance } from '../../src/venues/types.js';

/** A venue slower than this is left out of this round (the next one tries again). */
export const BALANCE_READ_TIMEOUT_MS = 5_000;
/** Venue reads in flight at once within one round. */
export const BALANCE_READ_CONCURRENCY = 8;
/** numeric(24,6) holds 18 integer digits: a figure this large is a venue fault, not a balance. */
const MAX_FIGURE = 1e17;

export interface BalanceRefresherDeps {
  pool: Pool;
  adapters: readonly VenueAdapter[];
  log: Logger;
  now: () => number;
  readTimeoutMs?: number;
  concurrency?: number;
}

export interface RoundSummary {
  /** Connections whose balance was read (landed, or already as new). */
  read: RefreshTarget[];
  /** Snapshots that landed (each bumped its version and wrote its event). */
  landed: number;
  /** Reads that failed, by partner and code. */
  failed: Record<string, Record<string, number>>;
}

function within<T>(p: Promise<T>, ms: number, partnerId: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VenueError('retryable', VenueErrorCodes.timeout, `no balance from ${partnerId} within ${ms} ms`, { partner_id: partnerId })), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The reading as a snapshot, or a VenueError for figures no balance can have. */
function snapshotOf(b: VenueBalance): VenueSnapshot {
  const sane = (x: number) => Number.isFinite(x) && Math.abs(x) < MAX_FIGURE;
  if (!sane(b.balance) || !sane(b.held) || !Number.isFinite(b.ts_event) || !Number.isFinite(new Date(b.ts_event).getTime())) {
    throw new VenueError('non_retryable', 'invalid_balance', `${b.partner_id} reported an impossible balance`, { partner_id: b.partner_id, details: { balance: b.balance, held: b.held, ts_event: b.ts_event } });
  }
  return { balance: b.balance, held: b.held, ts_event: b.ts_event };
}

export class BalanceRefresher {
  /** The venues whose balances this process can read (adapters declaring capabilities.balance). */
  readonly partnerIds: readonly string[];
  private readonly byId: ReadonlyMap<string, VenueAdapter>;
  private readonly timeoutMs: number;
  private readonly concurrency: number;

  constructor(private readonly d: BalanceRefresherDeps) {
    const readers = d.adapters.filter((a) => a.describe().capabilities.balance);
    this.byId = new Map(readers.map((a) => [a.id, a]));
    this.partnerIds = [...this.byId.keys()];
    this.timeoutMs = d.readTimeoutMs ?? BALANCE_READ_TIMEOUT_MS;
    this.concurrency = d.concurrency ?? BALANCE_READ_CONCURRENCY;
  }

  /** Re-reads the account's connected venues; the partner ids read. */
  async refreshAccount(routerAccountId: string): Promise<string[]> {
    if (this.partnerIds.length === 0) return [];
    const targets = await accountRefreshTargets(this.d.pool, routerAccountId, this.partnerIds, this.d.now());
    const round = await this.read(targets);
    this.logFailures(round, { router_account_id: routerAccountId });
    return round.read.map((t) => t.partner_id);
  }

  /** One scheduler round: at most `limit` connections not tried within `everyMs`. */
  async refreshDue(limit: number, everyMs = BALANCE_REFRESH_EVERY_MS): Promise<RoundSummary> {
    if (this.partnerIds.length === 0) return { read: [], landed: 0, failed: {} };
    const targets = await claimDueRefreshes(this.d.pool, { partnerIds: this.partnerIds, nowMs: this.d.now(), everyMs, limit });
    return this.read(targets);
  }

  logFailures(round: RoundSummary, context: object): void {
    if (Object.keys(round.failed).length) this.d.log.warn({ ...context, failed: round.failed }, 'some venue balances could not be read; the next refresh tries again');
  }

  /**
   * Reads `targets` at most `concurrency` at a time. A venue that fails or is slow only leaves its
   * connection out; a PostgreSQL failure ends the round (nothing can be recorded).
   */
  private async read(targets: RefreshTarget[]): Promise<RoundSummary> {
    const out: RoundSummary = { read: [], landed: 0, failed: {} };
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const t = targets[next++]!;
        const adapter = this.byId.get(t.partner_id)!;
        let snap: VenueSnapshot;
        try {
          snap = snapshotOf(await within(adapter.fetchBalance(t.router_account_id), this.timeoutMs, t.partner_id));
        } catch (err) {
          const code = err instanceof VenueError ? err.code : 'error';
          const byCode = (out.failed[t.partner_id] ??= {});
          byCode[code] = (byCode[code] ?? 0) + 1;
          continue;
        }
        if (await recordSnapshot(this.d.pool, t.account_partner_id, snap, this.d.now())) out.landed++;
        out.read.push(t);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, targets.length) }, worker));
    // Workers finish in any order: report in the order the targets came.
    const order = new Map(targets.map((t, i) => [t.account_partner_id, i]));
    out.read.sort((a, b) => order.get(a.account_partner_id)! - order.get(b.account_partner_id)!);
    return out;
  }
}
