/**
 * An execute worker in its own process, for kill tests. Its venues live in the parent (the test),
 * as a real venue lives outside the worker: each adapter here forwards its calls over the IPC
 * channel, so the venue's record of what was placed survives the worker's death. Run with
 * FLOW_FAILPOINTS naming a step of the worker (execute.after-place) it dies there by SIGKILL;
 * otherwise it works until the parent sends {type: 'stop'}. Says {type: 'ready'} once its workers run.
 */
import { pino } from 'pino';
import { ExecuteProcessor } from '../../../pipelines/processors/execute.js';
import { createPool } from '../../../src/store/pg/pool.js';
import { Keyspace } from '../../../src/store/redis/client.js';
import { VenueError, type VenueErrorKind } from '../../../src/venues/errors.js';
import type { VenueAdapter, VenueDescription } from '../../../src/venues/types.js';

type FromParent =
  | { type: 'descriptions'; list: VenueDescription[] }
  | { type: 'result'; n: number; ok: true; value: unknown }
  | { type: 'result'; n: number; ok: false; error: { kind: VenueErrorKind | null; code: string; message: string } }
  | { type: 'stop' };

const env = process.env as Record<string, string>;
const pending = new Map<number, (m: Extract<FromParent, { type: 'result' }>) => void>();
let seq = 0;
let descriptions: (list: VenueDescription[]) => void = () => undefined;
let stop: () => void = () => undefined;

process.on('message', (m: FromParent) => {
  if (m.type === 'descriptions') descriptions(m.list);
  else if (m.type === 'result') pending.get(m.n)?.(m);
  else if (m.type === 'stop') stop();
});

/** Calls `method` of the parent's adapter `partner`; a venue error comes back as the same VenueError. */
function call(partner: string, method: string, args: unknown[]): Promise<unknown> {
  const n = ++seq;
  return new Promise((resolve, reject) => {
    pending.set(n, (m) => {
      pending.delete(n);
      if (m.ok) resolve(m.value);
      else reject(m.error.kind ? new VenueError(m.error.kind, m.error.code, m.error.message, { partner_id: partner }) : new Error(m.error.message));
    });
    process.send!({ type: 'call', n, partner, method, args });
  });
}

const remote = (d: VenueDescription): VenueAdapter =>
  ({
    id: d.partner.partner_id,
    describe: () => d,
    placeOrder: (req: unknown) => call(d.partner.partner_id, 'placeOrder', [req]),
  }) as unknown as VenueAdapter;

const list = await new Promise<VenueDescription[]>((resolve) => {
  descriptions = resolve;
  process.send!({ type: 'describe' });
});
const pool = createPool(env.DATABASE_URL!, 4);
const processor = new ExecuteProcessor({
  redisUrl: env.REDIS_URL!,
  ks: new Keyspace(env.REDIS_PREFIX!),
  pool,
  adapters: list.map(remote),
  log: pino({ level: 'silent' }),
  now: Date.now,
  // A killed worker's job is handed on about a second after it died.
  lockMs: 1_000,
  concurrency: 2,
  // The parent's adapters are reached for placements only (no order-update feed, no fetchOrder).
  orderUpdates: false,
});
await Promise.all(processor.workers.map((w) => w.waitUntilReady()));
process.send!({ type: 'ready' });
await new Promise<void>((resolve) => (stop = resolve));
await processor.close();
await pool.end();
process.exit(0);
