/**
 * The request/reply channel over Redis (src/store/redis/command-channel.ts) that carries /sim/v1 to
 * the ingest role, on real Redis: answers reach their own caller, commands run one at a time in
 * order, nobody listening is said at once, a command taken after its caller gave up is dropped
 * (never carried out), the waiting list is bounded and expires, Redis out of reach is a 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/errors.js';
import { CommandChannel, type CommandServer } from '../../../src/store/redis/command-channel.js';
import { createRedis, deleteByPrefix, Keyspace, type Redis } from '../../../src/store/redis/client.js';
import { REDIS_URL, testNames } from '../../support/stack.js';

const prefix = testNames().prefix;
const ks = new Keyspace(prefix);
let redis: Redis;
const channels: CommandChannel[] = [];
const servers: CommandServer[] = [];

const channel = (name: string, maxQueued?: number) => {
  const c = new CommandChannel({ redis, redisUrl: REDIS_URL, ks, name, maxQueued });
  channels.push(c);
  return c;
};
const server = (c: CommandChannel) => {
  const s = c.server();
  servers.push(s);
  return s;
};

/** Serves `n` commands: each answer is `<payload>!`; returns the payloads in the order run. */
async function serve(s: CommandServer, n: number, expired: string[] = []): Promise<string[]> {
  const ran: string[] = [];
  while (ran.length < n) {
    await s.present();
    const t = await s.take(Date.now, (c) => expired.push(c.payload));
    if (!t) continue;
    ran.push(t.payload);
    await s.reply(t, `${t.payload}!`);
  }
  return ran;
}

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const c of channels) await c.close();
  await deleteByPrefix(redis, prefix);
  redis.disconnect();
});

describe('a command channel', () => {
  it('says at once that nobody listens, and queues nothing then', async () => {
    const c = channel('nobody');
    expect(await c.request('x', { startWithinMs: 2_000, runWithinMs: 2_000 })).toEqual({ absent: true });
    expect(await redis.llen(ks.k('cmd', 'nobody'))).toBe(0);
  });

  it('brings each caller its own answer, the commands run one at a time in the order sent', async () => {
    const c = channel('order');
    const s = server(c);
    await s.present();
    const sent = ['a', 'b', 'c', 'd', 'e'];
    const answers: Promise<unknown>[] = [];
    for (const [i, p] of sent.entries()) {
      answers.push(c.request(p, { startWithinMs: 10_000, runWithinMs: 10_000 }));
      // Each is queued before the next is sent.
      while ((await redis.llen(ks.k('cmd', 'order'))) < i + 1) await new Promise((r) => setTimeout(r, 5));
    }
    const ran = await serve(s, sent.length);
    expect(ran).toEqual(sent);
    expect(await Promise.all(answers)).toEqual(sent.map((p) => ({ answer: `${p}!` })));
  });

  it('keeps its listening connection between requests: one connection, the same one, for request after request', async () => {
    const name = `keep${Date.now()}`;
    const c = channel(name);
    const s = server(c);
    const callers = async () =>
      String(await redis.client('LIST'))
        .split('\n')
        .filter((l) => l.includes(` name=flow-${name}-caller `))
        .map((l) => /\bid=(\d+)/.exec(l)?.[1]);
    await s.present();
    const ids: (string | undefined)[][] = [];
    for (const p of ['one', 'two', 'three']) {
      const answer = c.request(p, { startWithinMs: 10_000, runWithinMs: 10_000 });
      await serve(s, 1);
      expect(await answer).toEqual({ answer: `${p}!` });
      ids.push(await callers());
    }
    expect(ids[0]).toHaveLength(1);
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[2]).toEqual(ids[0]);
    await c.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(await callers()).toEqual([]);
  });

  it('drops a command taken after its caller gave up: never carried out, the caller told it timed out', async () => {
    const c = channel('late');
    const s = server(c);
    await s.present();
    const late = c.request('too-late', { startWithinMs: 100, runWithinMs: 300 });
    await new Promise((r) => setTimeout(r, 20));
    const next = c.request('fresh', { startWithinMs: 5_000, runWithinMs: 5_000 });
    // The server comes to the list only after the first command's start-by instant.
    await new Promise((r) => setTimeout(r, 200));
    const expired: string[] = [];
    expect(await serve(s, 1, expired)).toEqual(['fresh']);
    expect(expired).toEqual(['too-late']);
    expect(await late).toEqual({ timeout: true });
    expect(await next).toEqual({ answer: 'fresh!' });
  });

  it('keeps at most maxQueued waiting commands (the oldest go) and lets the list expire', async () => {
    const c = channel('bounded', 3);
    const s = server(c);
    await s.present();
    const pending: Promise<unknown>[] = [];
    for (const p of ['1', '2', '3', '4', '5']) {
      pending.push(c.request(p, { startWithinMs: 2_000, runWithinMs: 50 }));
      while (!(await redis.lrange(ks.k('cmd', 'bounded'), 0, 0)).some((x) => JSON.parse(x).payload === p)) await new Promise((r) => setTimeout(r, 5));
    }
    expect(await redis.lrange(ks.k('cmd', 'bounded'), 0, -1).then((l) => l.map((x) => JSON.parse(x).payload).sort())).toEqual(['3', '4', '5']);
    const ttl = await redis.pttl(ks.k('cmd', 'bounded'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(4_000);
    expect(await Promise.all(pending)).toEqual(pending.map(() => ({ timeout: true })));
  });

  it('says nobody listens once the server closes', async () => {
    const c = channel('closing');
    const s = c.server();
    await s.present();
    await s.close();
    expect(await c.request('x', { startWithinMs: 1_000, runWithinMs: 1_000 })).toEqual({ absent: true });
  });

  it('carries hundreds of commands in flight at once from one process: each caller gets its own answer, in the order sent', async () => {
    const c = channel('many');
    const s = server(c);
    await s.present();
    const n = 300;
    const asked = Array.from({ length: n }, (_, i) => c.request(`m${i}`, { startWithinMs: 10_000, runWithinMs: 10_000 }));
    const ran = await serve(s, n);
    expect(ran).toEqual(Array.from({ length: n }, (_, i) => `m${i}`));
    expect(await Promise.all(asked)).toEqual(Array.from({ length: n }, (_, i) => ({ answer: `m${i}!` })));
    // Every answer was taken by the caller: nothing left behind in its reply list.
    expect(await redis.keys(`${ks.k('cmd', 'many', 'reply')}:*`)).toEqual([]);
  });

  it('answers 503 (StoreUnavailable) when Redis cannot take the command', async () => {
    const down = createRedis('redis://127.0.0.1:1', { lazyConnect: true });
    down.on('error', () => undefined);
    const c = new CommandChannel({ redis: down, redisUrl: 'redis://127.0.0.1:1', ks, name: 'down' });
    try {
      await expect(c.request('x', { startWithinMs: 500, runWithinMs: 500 })).rejects.toBeInstanceOf(StoreUnavailable);
    } finally {
      await c.close();
      down.disconnect();
    }
  });
});
