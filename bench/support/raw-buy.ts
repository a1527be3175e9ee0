/**
 * The writes of bench/orders.ts's baseline: a single-leg paper buy's PostgreSQL writes as one raw
 * `pg` transaction, no HTTP, no Fastify, no authentication, no planning. Which statements those are
 * is not assumed: captureBuy records every statement two buys the real route serves send (the
 * second one is kept: the first may fill caches), and the baseline replays the ones that write
 * (classified by what they are, printed by the bench): the buy's transaction frame and the writes
 * in it when the buy ran one, else its writing statements one by one (the one-statement practice
 * buy, then the relay's wake-up it sends after its commit), with
 * their captured parameters, each id the buy minted swapped for a fresh one and the capture's
 * account for the job's. So the baseline cannot drift from the route: a route that writes other
 * rows makes the baseline write them too, and the end-of-run checks count the raw side's rows with
 * the same rules as Flow's. What the baseline leaves out is the buy's reads and its planning (the
 * position, the live price from Redis, the account lock that the ledger append
 * takes again): the raw side knows its leg's price already.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { buildApp } from '../../api/rest/app.js';
import { clientOrderId } from '../../api/rest/orders/execution.js';
import { appContext, type Runtime } from '../../cli/runtime.js';
import { newId } from '../../src/ids.js';
import { PAPER_BUY_REFUSED } from '../../src/store/pg/paper-buys.js';
import { RequestGate } from '../../src/store/redis/gate.js';
import type { Outcome } from './closed-loop.js';
import { recordingPool, recordingRedis, type SentStatement } from './sql-capture.js';

export const BUY_PATH = '/flow/v1/auth/orders/buy';
/** The capture buy's amount (the raw side's legs all stake this). */
export const CAPTURE_CENTS = 150;
const MAX_PRICE = 0.99;

/** A position a paper leg fills at a live price, and the partner the leg names. */
export interface BuyTarget {
  position_hash: string;
  partner_id: string;
  price: number;
}

/** One single-leg paper buy of `cents` ATLAS cents. */
export const buyBody = (t: BuyTarget, cents: number): string =>
  JSON.stringify({ orders: [{ position_hash: t.position_hash, partner_id: t.partner_id, amount: cents / 100, max_price: MAX_PRICE, mode: 'paper' }] });

/** What a served buy sent, and the part the baseline replays. */
export interface BuyCapture {
  /** Every statement the buy sent, authentication's included, in order. */
  statements: SentStatement[];
  /** Indices into `statements` of the transaction's frame (when the buy ran one) and writes: what the baseline sends. */
  replayed: number[];
  /** Names of the Redis commands the buy sent (authentication, rate limits, the hot-state read). */
  redis: string[];
  /** The capture's account and Idempotency-Key, swapped per job. */
  account: string;
  key: string;
  /** The ids the buy minted (router_order_id, ledger ids, opportunity, decision, client order id), swapped per job. */
  minted: string[];
  /** The capture leg's stake, in cents. */
  cents: number;
}

/** Ids newId mints (`<prefix>_<16 base64url>`) and client order ids (`fco_<32 hex>`). */
const MINTED = /(?<![A-Za-z0-9_-])(?:[a-z]{2,5}_[A-Za-z0-9_-]{16}|fco_[0-9a-f]{32})(?![A-Za-z0-9_-])/g;
/** Row-locking clauses: a SELECT ... FOR UPDATE locks, it does not write. */
const LOCKING = /\bFOR\s+(?:NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)\b/gi;

function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  return out;
}

/**
 * Whether a statement of the transaction writes: it inserts, updates or deletes rows, or calls a
 * function PostgreSQL knows as volatile (the project's SQL functions that write, such as the ledger
 * append and the Idempotency-Key claim; a read-only one is declared stable or immutable).
 */
async function writes(db: pg.Pool, text: string, volatile: Set<string>): Promise<boolean> {
  const stripped = text.replace(LOCKING, '');
  if (/\b(?:INSERT|UPDATE|DELETE)\b/i.test(stripped)) return true;
  return [...stripped.matchAll(/\b(flow_\w+)\s*\(/gi)].some((m) => volatile.has(m[1]!.toLowerCase()));
}

/**
 * Serves two buys of `target` for the key's account through the real app, on a pool and a Redis client that
 * record what they send, and returns what the second one sent. Both land like any other buy.
 */
export async function captureBuy(rt: Runtime, key_: { api_key: string; router_account_id: string }, target: BuyTarget): Promise<BuyCapture> {
  const account = key_.router_account_id;
  const { pool, sent } = recordingPool(rt.config.databaseUrl);
  const { redis, sent: commands } = recordingRedis(rt.config.redisUrl);
  const built = await buildApp(appContext(rt, { pool, redis, gate: new RequestGate(redis, rt.ks), metrics: new Registry() }));
  let key = '';
  try {
    for (let i = 0; i < 2; i++) {
      sent.length = 0;
      commands.length = 0;
      key = randomUUID();
      const r = await built.app.inject({
        method: 'POST',
        url: BUY_PATH,
        headers: { 'x-api-key': key_.api_key, 'idempotency-key': key, 'content-type': 'application/json' },
        payload: buyBody(target, CAPTURE_CENTS),
      });
      const leg = r.statusCode === 200 ? (JSON.parse(r.body) as { data: { results: { status: string }[] } }).data.results[0] : undefined;
      if (leg?.status !== 'completed') throw new Error(`the capture buy answered ${r.statusCode}: ${r.body.slice(0, 500)}`);
      // Let what the buy sends after answering go out (the gate's batched usage counting, the
      // relay's wake-up) before the recording is read or the next buy starts.
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await built.close();
    await pool.end();
    redis.disconnect();
  }
  const statements = sent.map((s) => ({ text: s.text, values: s.values }));
  const begin = statements.findIndex((s) => /^BEGIN$/i.test(s.text));
  const commit = statements.findIndex((s) => /^COMMIT$/i.test(s.text));
  const framed = begin >= 0 && commit > begin;

  const db = new pg.Pool({ connectionString: rt.config.databaseUrl, max: 1 });
  let replayed: number[];
  try {
    const { rows } = await db.query<{ name: string }>("SELECT proname AS name FROM pg_proc WHERE proname LIKE 'flow\\_%' AND provolatile = 'v'");
    const volatile = new Set(rows.map((r) => r.name));
    const [from, to] = framed ? [begin + 1, commit] : [0, statements.length];
    replayed = [];
    for (let i = from; i < to; i++) if (await writes(db, statements[i]!.text, volatile)) replayed.push(i);
    if (framed) replayed = [begin, ...replayed, commit];
  } finally {
    await db.end();
  }
  const minted = new Set<string>();
  for (const i of replayed) for (const s of strings(statements[i]!.values)) for (const m of s.matchAll(MINTED)) if (m[0] !== account) minted.add(m[0]);
  if (![...minted].some((m) => m.startsWith('ord_'))) throw new Error('the capture buy wrote no router_order_id: bench/support/raw-buy.ts expects an order row among the writes; update the baseline');
  return { statements, replayed, redis: [...commands], account, key, minted: [...minted], cents: CAPTURE_CENTS };
}

export interface RawBuySettings {
  name: string;
  /** Named statements: each parsed and planned once per connection. */
  prepared: boolean;
}

/**
 * One buy's writes for `account` as a raw transaction (or its one statement): the captured frame
 * and writes in order, with the capture's account, key and minted ids swapped for the job's. 'ok'
 * once committed; a write that refuses (an outcome other than ok, fresh or created) rolls back and
 * answers its outcome.
 */
export function rawBuyer(pool: pg.Pool, c: BuyCapture, s: RawBuySettings): (account: string) => Promise<Outcome> {
  const swap = new RegExp([c.account, c.key, ...c.minted].map((t) => t.replace(/[-[\]/{}()*+?.\\^$|]/g, '\\$&')).join('|'), 'g');
  const steps = c.replayed.map((i, k) => ({ text: c.statements[i]!.text, values: c.statements[i]!.values, name: `bench_orders_${k}` }));
  const fill = (v: unknown, to: Map<string, string>): unknown =>
    typeof v === 'string' ? v.replace(swap, (t) => to.get(t)!) : Array.isArray(v) ? v.map((x) => fill(x, to)) : v;
  return async (account) => {
    const key = randomUUID();
    const to = new Map<string, string>([[c.account, account], [c.key, key]]);
    for (const m of c.minted) to.set(m, m.startsWith('fco_') ? clientOrderId(account, key, 0) : newId(m.slice(0, m.indexOf('_'))));
    const client = await pool.connect();
    let open = false;
    try {
      for (const step of steps) {
        const { rows } = await client.query<{ outcome?: string }>(
          s.prepared && step.values.length > 0 ? { name: step.name, text: step.text, values: step.values.map((v) => fill(v, to)) } : { text: step.text, values: step.values.map((v) => fill(v, to)) },
        );
        if (/^BEGIN$/i.test(step.text)) open = true;
        if (/^COMMIT$/i.test(step.text)) open = false;
        const outcome = rows[0]?.outcome;
        if (outcome !== undefined && outcome !== 'ok' && outcome !== 'fresh' && outcome !== 'created') {
          if (open) await client.query('ROLLBACK');
          open = false;
          return { ok: false, refusal: `refused ${outcome}` };
        }
      }
      return { ok: true };
    } catch (err) {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      // The one-statement buy refuses by raising (nothing written): as a refused outcome above.
      const e = err as { code?: string; detail?: string };
      if (e.code === PAPER_BUY_REFUSED) return { ok: false, refusal: `refused ${e.detail}` };
      throw err;
    } finally {
      client.release();
    }
  };
}
