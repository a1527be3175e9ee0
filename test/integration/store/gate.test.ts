/**
 * The batched rate-limit gate against real Redis: requests of one turn share a script call, requests
 * that arrive while it is in flight share the next, and every verdict and counter is what counting one
 * request at a time would give.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowsAt, type CountedRequest } from '../../../src/domain/ratelimit.js';
import { createRedis, deleteByPrefix, Keyspace, type Redis } from '../../../src/store/redis/client.js';
import { GateUnavailable, RequestGate, type GateOutcome } from '../../../src/store/redis/gate.js';
import { REDIS_URL } from '../../support/stack.js';
import { randomRequests, referenceCounts } from '../../support/ratelimit-model.js';

const prefix = `flowtest_gate_${process.pid}_${randomBytes(4).toString('hex')}`;
const ks = new Keyspace(prefix);
let redis: Redis;
let gate: RequestGate;

beforeAll(() => {
  redis = createRedis(REDIS_URL);
  gate = new RequestGate(redis, ks);
});
afterAll(async () => {
  await gate.close();
  await deleteByPrefix(redis, prefix);
  redis.disconnect();
});

const NOW = Date.parse('2026-11-20T10:00:30.000Z');
const principal = (workspace: string, r: CountedRequest) => ({ workspace_id: workspace, key_id: `key-${workspace}`, router_account_id: `acct-${workspace}`, rpm: r.rpm, rpd: r.rpd });

/** Issues every check in the same turn and waits for all verdicts (errors are returned, not thrown). */
function checkAll(workspace: string, reqs: CountedRequest[], nowMs = NOW): Promise<(GateOutcome | Error)[]> {
  return Promise.all(
    reqs.map(
      (r) =>
        new Promise<GateOutcome | Error>((resolve) =>
          gate.check(principal(workspace, r), nowMs, r.dayExempt, (err, outcome) => resolve(err ? (err as Error) : outcome!)),
        ),
    ),
  );
}

const counters = (workspace: string, nowMs = NOW) => {
  const w = windowsAt(nowMs);
  return [ks.k('rl', workspace, 'm', w.minuteIndex), ks.k('rl', workspace, 'd', w.dayIndex)] as const;
};

describe('batched gate', () => {
  it('gives every request of a burst the verdict and counts of counting one at a time, on 40 random bursts', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const workspace = `ws-random-${seed}`;
      const [mk, dk] = counters(workspace);
      // Some bursts start from counts left by earlier requests, some from nothing.
      const m0 = seed % 3 === 0 ? 0 : seed % 25;
      const d0 = seed % 3 === 0 ? 0 : (seed * 3) % 35;
      if (m0 > 0) await redis.set(mk, m0, 'PX', 60_000);
      if (d0 > 0) await redis.set(dk, d0, 'PX', 60_000);
      const reqs = randomRequests(seed, 10 + seed * 3);
      const ref = referenceCounts(m0, d0, reqs);
      const calls = gate.batching.calls;
      const got = await checkAll(workspace, reqs);
      expect(gate.batching.calls - calls, `seed ${seed}: one script call for the burst`).toBe(1);
      expect(
        got.map((o) => (o instanceof Error ? o : { kind: o.kind, minuteCount: o.minuteCount, dayCount: o.dayCount })),
        `seed ${seed}`,
      ).toEqual(ref.verdicts);
      expect(Number((await redis.get(mk)) ?? 0), `seed ${seed} minute counter`).toBe(ref.minute);
      expect(Number((await redis.get(dk)) ?? 0), `seed ${seed} day counter`).toBe(ref.day);
    }
  });

  it('creates counters with the window TTL and no counter for a burst that admits nothing', async () => {
    const now = Date.parse('2026-11-20T10:00:45.000Z');
    const [mk, dk] = counters('ws-ttl', now);
    await checkAll('ws-ttl', [{ rpm: 5, rpd: 5, dayExempt: false }], now);
    const ttl = await redis.pttl(mk);
    expect(ttl).toBeGreaterThan(10_000);
    expect(ttl).toBeLessThanOrEqual(15_000);
    expect(await redis.pttl(dk)).toBeGreaterThan(13 * 3_600_000);
    const [nm, nd] = counters('ws-none', now);
    const refused = await checkAll('ws-none', [{ rpm: 0, rpd: 5, dayExempt: false }], now);
    expect((refused[0] as GateOutcome).kind).toBe('minute_exceeded');
    expect(await redis.exists(nm, nd)).toBe(0);
  });

  it('requests arriving while a call is in flight wait and go together in the next call', async () => {
    const r = { rpm: 1_000, rpd: 1_000, dayExempt: false };
    // Holds the Redis server busy for 300 ms from another connection, so the first call stays in flight.
    const blocker = createRedis(REDIS_URL);
    try {
      const busy = blocker.eval("local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - s > 200000 return 1", 0);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const calls = gate.batching.calls;
      const first = checkAll('ws-lane', Array.from({ length: 30 }, () => r));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = checkAll('ws-lane', Array.from({ length: 20 }, () => r));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const third = checkAll('ws-lane', Array.from({ length: 5 }, () => r));
      const other = checkAll('ws-lane-other', [r]);
      const [a, b, c, o] = await Promise.all([first, second, third, other]);
      await busy;
      // One call for the first wave, one for the two waves that queued behind it, one for the other lane.
      expect(gate.batching.calls - calls).toBe(3);
      expect((a.at(-1) as GateOutcome).minuteCount).toBe(30);
      expect([...b, ...c].map((x) => (x as GateOutcome).minuteCount)).toEqual(Array.from({ length: 25 }, (_, i) => 31 + i));
      expect((o[0] as GateOutcome).minuteCount).toBe(1);
    } finally {
      blocker.disconnect();
    }
  });

  it('a failing script call fails every request of its batch, and the lane recovers', async () => {
    const [mk] = counters('ws-broken');
    await redis.set(mk, 'not-a-number', 'PX', 60_000);
    const r = { rpm: 10, rpd: 10, dayExempt: false };
    const failed = await checkAll('ws-broken', [r, r, r]);
    for (const f of failed) expect(f).toBeInstanceOf(Error);
    await redis.del(mk);
    const ok = await checkAll('ws-broken', [r, r]);
    expect(ok.map((o) => (o as GateOutcome).minuteCount)).toEqual([1, 2]);
  });

  it('refuses at once with GateUnavailable when Redis is not connected, sending nothing', async () => {
    const offline = createRedis('redis://127.0.0.1:1', { lazyConnect: true });
    offline.on('error', () => undefined);
    const offGate = new RequestGate(offline, ks);
    try {
      const r = { rpm: 10, rpd: 10, dayExempt: false };
      const out = await new Promise<unknown>((resolve) => offGate.check(principal('ws-offline', r), NOW, false, (err) => resolve(err)));
      expect(out).toBeInstanceOf(GateUnavailable);
      expect(offGate.batching.calls).toBe(0);
      await expect(offGate.peek(offGate.recordKey('key', 'x'))).rejects.toBeInstanceOf(GateUnavailable);
    } finally {
      await offGate.close();
      offline.disconnect();
    }
  });
});
