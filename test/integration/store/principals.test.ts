/**
 * Principal resolution against real Redis and PostgreSQL: a revocation that races a lookup stays a
 * revocation on every process, and a flood of unknown keys never reaches PostgreSQL nor evicts a
 * valid key from the in-process cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysRevoke } from '../../../cli/keys.js';
import { newApiKey, sha256Hex } from '../../../src/ids.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { ensureKeyIndex, isInvalid, loadPrincipalRecord, PrincipalCache, type Credential } from '../../../src/store/principals.js';
import { subscribeBus } from '../../../src/store/redis/bus.js';
import type { Redis } from '../../../src/store/redis/client.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
const subscribers: Redis[] = [];
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  for (const r of subscribers) r.disconnect();
  await s?.close();
});

const newKey = (): Promise<CreatedKey> =>
  createKey(s.rt.pool, s.rt.gate, { plan: 'pro', keyType: 'data', environment: 'test', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 });
const keyCred = (k: CreatedKey | string): Credential => ({ kind: 'key', id: sha256Hex(typeof k === 'string' ? k : k.api_key) });

/** A PrincipalCache wired to the bus as an API process wires its own (api/rest/app.ts); resolves `evicted` on each eviction. */
async function processCache(opts: ConstructorParameters<typeof PrincipalCache>[2] = {}) {
  const cache = new PrincipalCache(s.rt.gate, s.rt.pool, opts);
  const sub = s.rt.redis.duplicate();
  subscribers.push(sub);
  let onEvict: () => void = () => undefined;
  await subscribeBus(sub, s.rt.ks, ['keys-revoked'], (_c, raw) => {
    cache.evictKeyHash((JSON.parse(raw) as { key_hash: string }).key_hash);
    onEvict();
  });
  return { cache, nextEviction: () => new Promise<void>((r) => (onEvict = r)) };
}

/** Counts every PostgreSQL query of the stack's pool: each takes a client from the pool. */
function countPgQueries(): { readonly n: number; stop(): void } {
  const counter = { n: 0 };
  const inc = () => counter.n++;
  s.rt.pool.on('acquire', inc);
  return {
    get n() {
      return counter.n;
    },
    stop: () => void s.rt.pool.off('acquire', inc),
  };
}

/** Counts the commands the stack's Redis connection sends about principals (copies, index). */
function countPrincipalRedisCommands(): { readonly n: number; stop(): void } {
  const redis = s.rt.redis as unknown as { sendCommand(cmd: { name: string; args: unknown[] }): unknown };
  const original = redis.sendCommand;
  let n = 0;
  redis.sendCommand = function (this: unknown, cmd) {
    if (cmd.args.some((a) => String(a).includes(':principal:'))) n++;
    return original.call(this, cmd);
  };
  return {
    get n() {
      return n;
    },
    stop: () => void (redis.sendCommand = original),
  };
}

/**
 * A point a lookup stops at: `hook` (passed as a lookup's hook) signals `reached` and waits until
 * `release()`, so a test acts while the lookup is held there (no sleeps).
 */
function latch() {
  let signal!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (signal = r));
  const released = new Promise<void>((r) => (release = r));
  return {
    reached,
    release,
    hook: async () => {
      signal();
      await released;
    },
  };
}

describe('revocation racing a lookup', () => {
  it('a lookup that read PostgreSQL before the revoke and writes after it does not revive the key on any process', async () => {
    const k = await newKey();
    const cred = keyCred(k);
    const stop = latch();
    // Process A: its lookup stops between its PostgreSQL read and its Redis write.
    const a = await processCache({ afterStoreRead: stop.hook });
    const b = await processCache();
    const held = a.cache.resolve(cred);
    await stop.reached;
    // Process B and the API (a third process) have the key cached as valid.
    const before = await b.cache.resolve(cred);
    expect(isInvalid(before)).toBe(false);
    expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': k.api_key })).status).toBe(200);

    const bEvicted = b.nextEviction();
    const aEvicted = a.nextEviction();
    expect(await keysRevoke(s.rt, k.key_id)).toBe(true);
    await Promise.all([aEvicted, bEvicted]);
    stop.release();
    // A's late write loses to the revocation: it answers revoked and caches nothing valid.
    expect(await held).toEqual({ invalid: 'revoked' });

    expect(await s.rt.redis.get(s.rt.gate.recordKey('key', cred.id))).toBe(JSON.stringify({ invalid: 'revoked' }));
    expect(a.cache.peek(cred)).not.toMatchObject({ key_id: k.key_id });
    expect(await a.cache.resolve(cred)).toEqual({ invalid: 'revoked' });
    expect(await b.cache.resolve(cred)).toEqual({ invalid: 'revoked' });
    const fresh = await processCache();
    expect(await fresh.cache.resolve(cred)).toEqual({ invalid: 'revoked' });
    // The API process learns it over the same bus (milliseconds).
    let r = await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': k.api_key });
    for (let i = 0; i < 50 && r.status !== 401; i++) {
      await new Promise((res) => setTimeout(res, 20));
      r = await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': k.api_key });
    }
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/revoked/);
  });

  it('an answer read before an eviction does not enter the in-process cache after it', async () => {
    const k = await newKey();
    const cred = keyCred(k);
    const stop = latch();
    const a = await processCache({ beforeFill: stop.hook });
    const held = a.cache.resolve(cred);
    await stop.reached;
    const evicted = a.nextEviction();
    await keysRevoke(s.rt, k.key_id);
    await evicted;
    stop.release();
    // The request that asked before the revocation may pass; nothing after it may.
    expect(await held).toMatchObject({ key_id: k.key_id });
    expect(a.cache.peek(cred)).toBeUndefined();
    expect(await a.cache.resolve(cred)).toEqual({ invalid: 'revoked' });
  });

  it('a lookup held across the revocation that writes its record still leaves the tombstone in Redis', async () => {
    // Same race through the uncached path the stream gateway uses at each key re-check.
    const k = await newKey();
    const cred = keyCred(k);
    const stop = latch();
    const held = loadPrincipalRecord(s.rt.gate, s.rt.pool, cred, { afterStoreRead: stop.hook });
    await stop.reached;
    await keysRevoke(s.rt, k.key_id);
    stop.release();
    expect(await held).toEqual({ invalid: 'revoked' });
    const ttl = await s.rt.redis.pttl(s.rt.gate.recordKey('key', cred.id));
    expect(ttl).toBeGreaterThan(3_000_000);
  });
});

describe('a flood of unknown keys', () => {
  it('10,000 random well-formed keys cost PostgreSQL nothing, and a valid key stays in the in-process cache', async () => {
    expect(await ensureKeyIndex(s.rt.gate, s.rt.pool)).toBe(true);
    const valid = await newKey();
    const now = Date.now();
    // A process whose clock stands still, so only eviction (not expiry) could drop the valid entry.
    const { cache } = await processCache({ now: () => now, maxNegative: 500 });
    const rec = await cache.resolve(keyCred(valid));
    expect(rec).toMatchObject({ key_id: valid.key_id });

    const pg = countPgQueries();
    try {
      const flood = Array.from({ length: 10_000 }, () => newApiKey(Math.random() < 0.5 ? 'test' : 'live'));
      for (let i = 0; i < flood.length; i += 200) {
        const answers = await Promise.all(flood.slice(i, i + 200).map((key) => cache.resolve(keyCred(key))));
        for (const a of answers) expect(a).toEqual({ invalid: 'unknown' });
      }
      expect(pg.n).toBe(0);
      expect(cache.size).toEqual({ valid: 1, refused: 500 });
      // Still answered from the process, not even from Redis.
      expect(cache.peek(keyCred(valid))).toBe(rec);
      expect(await cache.resolve(keyCred(valid))).toBe(rec);
      expect(pg.n).toBe(0);
    } finally {
      pg.stop();
    }
  }, 120_000);

  it('through the API: 10,000 random well-formed keys get 401 with no PostgreSQL query, and a valid key is still served without one', async () => {
    const valid = await newKey();
    expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': valid.api_key })).status).toBe(200);
    const pg = countPgQueries();
    try {
      const flood = Array.from({ length: 10_000 }, () => newApiKey('live'));
      for (let i = 0; i < flood.length; i += 100) {
        const answers = await Promise.all(flood.slice(i, i + 100).map((key) => get(s.built.app, '/flow/v1/auth/me', { 'x-api-key': key })));
        for (const a of answers) expect([a.status, a.body.error.code]).toEqual([401, 'unauthorized']);
      }
      expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': valid.api_key })).status).toBe(200);
      expect(pg.n).toBe(0);
    } finally {
      pg.stop();
    }
  }, 180_000);

  it('a key with a bad checksum is refused with no Redis or PostgreSQL lookup', async () => {
    const valid = await newKey();
    const k = valid.api_key;
    const last = k.at(-1) === 'a' ? 'b' : 'a';
    const garbage = [k.slice(0, -1) + last, k.slice(0, -1), `${k}x`, 'flow_test_' + 'A'.repeat(39), 'not-a-key', 'x'.repeat(300)];
    const pg = countPgQueries();
    const redis = countPrincipalRedisCommands();
    try {
      for (const key of garbage) {
        const r = await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': key });
        expect([r.status, r.body.error.code]).toEqual([401, 'unauthorized']);
      }
      expect(redis.n).toBe(0);
      expect(pg.n).toBe(0);
    } finally {
      redis.stop();
      pg.stop();
    }
    // The count does see a real lookup: a well-formed unknown key asks Redis (and only Redis).
    const seen = countPrincipalRedisCommands();
    try {
      expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': newApiKey('test') })).status).toBe(401);
      expect(seen.n).toBeGreaterThan(0);
    } finally {
      seen.stop();
    }
  });

  it('when Redis loses the index, valid keys still resolve (from PostgreSQL) and the index rebuilds itself', async () => {
    const valid = await newKey();
    await s.rt.redis.del(s.rt.ks.k('principal', 'index'));
    expect(await s.rt.gate.keyIndexComplete()).toBe(false);
    const pg = countPgQueries();
    try {
      const { cache } = await processCache();
      expect(await cache.resolve(keyCred(valid))).toMatchObject({ key_id: valid.key_id });
      expect(pg.n).toBeGreaterThan(0);
    } finally {
      pg.stop();
    }
    // The lookup that found the index incomplete started a rebuild (the start-up path runs the same).
    for (let i = 0; i < 100 && !(await s.rt.gate.keyIndexComplete()); i++) {
      await ensureKeyIndex(s.rt.gate, s.rt.pool);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await s.rt.gate.keyIndexComplete()).toBe(true);
    expect(await s.rt.redis.sismember(s.rt.ks.k('principal', 'index'), sha256Hex(valid.api_key))).toBe(1);
    const after = countPgQueries();
    try {
      const { cache } = await processCache();
      expect(await cache.resolve(keyCred(newApiKey('test')))).toEqual({ invalid: 'unknown' });
      expect(after.n).toBe(0);
    } finally {
      after.stop();
    }
  });
});
