/**
 * Runs inside the history writer's thread (pipelines/history/writer-thread.ts starts it): opens
 * Redis for itself, runs one HistoryConsumer whose inserts go to the owner's ClickHouse client, and
 * answers the owner's requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/log.js';
import type { Inserter } from '../../src/store/clickhouse/writer.js';
import { createRedis, Keyspace } from '../../src/store/redis/client.js';
import { serveThread } from '../thread-host.js';
import { HistoryConsumer } from './consumer.js';
import type { InsertError, WriterThreadData, WriterThreadMessage, WriterThreadRequest } from './writer-thread.js';

const port = parentPort;
if (!port) throw new Error('writer-thread-main runs as a worker thread (see writer-thread.ts)');
const data = workerData as WriterThreadData;

const log = createLogger(data.logLevel).child({ component: 'history', thread: 'history-writer' });
const redis = createRedis(data.redisUrl, { name: 'flow-history-lease' });
// Failing commands are handled where they are sent; the lease simply runs out while Redis is away.
redis.on('error', () => undefined);
const send = (m: WriterThreadMessage) => port.postMessage(m);

/** Inserts waiting for the owner's answer. */
const inserts = new Map<number, (error: InsertError | null) => void>();
let nextInsert = 1;
const clickhouse: Inserter = {
  async insert(params) {
    let body = '';
    for await (const chunk of params.values as AsyncIterable<string | Buffer>) body += String(chunk);
    const id = nextInsert++;
    const error = await new Promise<InsertError | null>((resolve) => {
      inserts.set(id, resolve);
      send({ kind: 'insert', id, insert: { table: params.table, columns: [...((params.columns as string[]) ?? [])], format: 'TabSeparated', body, settings: { ...params.clickhouse_settings } } });
    });
    if (error) throw Object.assign(new Error(error.message), error.code ? { code: error.code } : {});
    return { executed: true, query_id: '', response_headers: {}, summary: undefined } as Awaited<ReturnType<Inserter['insert']>>;
  },
};
const metrics = new Registry();
const consumer = new HistoryConsumer({ redis, redisUrl: data.redisUrl, ks: new Keyspace(data.redisPrefix), clickhouse, log, metrics, ...data.consumer }).start();

async function answer(req: WriterThreadRequest): Promise<unknown> {
  switch (req.op) {
    case 'stats':
      return consumer.stats();
    case 'idle':
      return consumer.idle();
    case 'drain':
      return consumer.drain(req.timeoutMs);
    case 'stop':
      await consumer.stop();
      await redis.quit().catch(() => undefined);
      return null;
    default:
      return null;
  }
}

await serveThread(port, {
  metrics,
  answer: (req) => answer(req as WriterThreadRequest),
  other: (req) => {
    if (req.op !== 'inserted') return false;
    const r = req as Extract<WriterThreadRequest, { op: 'inserted' }>;
    inserts.get(r.id)?.(r.error);
    inserts.delete(r.id);
    return true;
  },
});
