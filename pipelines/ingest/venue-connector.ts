/**
 * Connects venue adapters in the background, so a venue whose host does not answer never keeps
 * ingest from starting: the other venues run, and this one's quotes are simply absent (or go stale)
 * until it connects.
 *
 * Per adapter, one attempt is connect() → `prepare` (the composition root seeds the venue's
 * catalog) → `attach` (the ingester starts reading it). A failed attempt logs one structured
 * warning and is tried again after a backoff of `minBackoffMs` doubling to `maxBackoffMs`, with
 * ±20 % jitter so several ingest processes do not knock in step. connect() is idempotent, so an
 * attempt that failed after connecting (PostgreSQL refused the catalog) does not reconnect. A
 * `fatal` venue error (credentials refused) is logged as an error and retried at the longest
 * backoff: an operator may fix the venue side without restarting us.
 *
 * Once attached, the adapter owns its connection (its feeds reconnect on their own); this module's
 * job is done for it.
 */
import { isVenueError } from '../../src/venues/errors.js';
import type { VenueAdapter } from '../../src/venues/types.js';
import type { Logger } from '../../src/log.js';

export interface VenueConnectorOptions {
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** After connect, before the venue is read: what must exist first (its catalog). Throwing retries the attempt. */
  prepare(a: VenueAdapter): Promise<void>;
  /** Starts reading the connected, prepared venue (Ingester.attach). */
  attach(a: VenueAdapter): Promise<void>;
  /** First retry delay (default 1 s) and the longest (default 30 s, as the adapters' own reconnects). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
  /** Jitter source in [0, 1) (tests pass a constant). */
  random?: () => number;
}

/** One venue's connection state, for metrics and logs. */
export interface VenueConnectState {
  partner_id: string;
  connected: boolean;
  /** Attempts made (the first included) and how many failed. */
  attempts: number;
  failures: number;
  last_error: string | null;
  /** When it connected (ms), null until then. */
  connected_at: number | null;
}

export const DEFAULT_MIN_BACKOFF_MS = 1_000;
export const DEFAULT_MAX_BACKOFF_MS = 30_000;

/** The error and its root cause (fetch's "fetch failed" hides the ECONNREFUSED an operator needs). */
function describeError(err: unknown): string {
  const head = isVenueError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
  let root: unknown = err;
  for (let i = 0; i < 5 && root instanceof Error && root.cause !== undefined; i++) root = root.cause;
  const why = root !== err && root instanceof Error ? root.message : null;
  return why && !head.includes(why) ? `${head} (${why})` : head;
}

export class VenueConnector {
  private readonly states = new Map<string, VenueConnectState>();
  private readonly loops = new Map<string, Promise<void>>();
  private readonly waiters = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  private stopped = false;

  constructor(private readonly o: VenueConnectorOptions) {}

  /** Starts connecting each adapter in the background; returns at once. */
  start(adapters: readonly VenueAdapter[]): void {
    for (const a of adapters) {
      if (this.loops.has(a.id) || this.stopped) continue;
      this.states.set(a.id, { partner_id: a.id, connected: false, attempts: 0, failures: 0, last_error: null, connected_at: null });
      this.loops.set(a.id, this.loop(a));
    }
  }

  /** A copy of every venue's state, in start order. */
  snapshot(): VenueConnectState[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  state(partnerId: string): VenueConnectState | null {
    const s = this.states.get(partnerId);
    return s ? { ...s } : null;
  }

  /** Ends the retries. An attempt under way finishes on its own; its adapter is closed by the ingester's stop (or here when not attached). */
  stop(): void {
    this.stopped = true;
    for (const w of [...this.waiters]) {
      clearTimeout(w.timer);
      w.wake();
    }
  }

  private backoff(failures: number, fatal: boolean): number {
    const min = this.o.minBackoffMs ?? DEFAULT_MIN_BACKOFF_MS;
    const max = this.o.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    const base = fatal ? max : Math.min(max, min * 2 ** Math.min(failures - 1, 30));
    return Math.round(base * (0.8 + 0.4 * (this.o.random ?? Math.random)()));
  }

  private sleep(ms: number): Promise<void> {
    // Interruptible: stop() wakes every sleeper so the loops end at once.
    return new Promise((resolve) => {
      const w = {
        timer: setTimeout(() => w.wake(), ms),
        wake: () => {
          this.waiters.delete(w);
          resolve();
        },
      };
      w.timer.unref();
      this.waiters.add(w);
    });
  }

  private async loop(a: VenueAdapter): Promise<void> {
    const st = this.states.get(a.id)!;
    const now = this.o.now ?? Date.now;
    while (!this.stopped) {
      st.attempts++;
      try {
        await a.connect();
        if (this.stopped) break;
        await this.o.prepare(a);
        if (this.stopped) break;
        await this.o.attach(a);
        st.connected = true;
        st.connected_at = now();
        st.last_error = null;
        this.o.log.info({ partner_id: a.id, attempts: st.attempts }, 'venue connected');
        return;
      } catch (err) {
        st.failures++;
        st.last_error = describeError(err);
        const fatal = isVenueError(err) && err.kind === 'fatal';
        const retryInMs = this.backoff(st.failures, fatal);
        const fields = { partner_id: a.id, attempt: st.attempts, error: st.last_error, error_code: isVenueError(err) ? err.code : null, retry_in_ms: retryInMs };
        if (fatal) this.o.log.error(fields, 'venue refused the connection (fatal); retrying at the longest backoff, the other venues run meanwhile');
        else this.o.log.warn(fields, 'venue not reachable; retrying in the background, the other venues run meanwhile');
        await this.sleep(retryInMs);
      }
    }
    // Stopped before the venue was attached: nothing else will close what connect() opened.
    if (!st.connected) await a.close().catch(() => undefined);
  }

  /** Resolves once every loop has ended (after stop(), or when all connected). */
  async settled(): Promise<void> {
    await Promise.all(this.loops.values());
  }
}
