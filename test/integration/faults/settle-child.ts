/**
 * An order settler in its own process, for kill tests: run with FLOW_FAILPOINTS naming a step of the
 * settler (settle.after-order@N), it dies there by SIGKILL. Otherwise it settles until no settlement
 * is pending, says "drained" and exits 0.
 */
import { pino } from 'pino';
import { OrderSettler } from '../../../pipelines/settlement/settler.js';
import { createPool } from '../../../src/store/pg/pool.js';

const env = process.env as Record<string, string>;
const pool = createPool(env.DATABASE_URL!, 6);
const settler = new OrderSettler({ pool, log: pino({ level: 'silent' }), batchSize: Number(env.SETTLE_BATCH ?? 200), concurrency: 4 });
await settler.drain();
const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM contest_settlements WHERE pending');
process.stdout.write(rows[0]!.n === 0 ? 'drained\n' : `still pending: ${rows[0]!.n}\n`);
await pool.end();
