/**
 * GET /flow/v1/signals and GET /flow/v1/signals/types over HTTP (inject; every answer is held to the
 * OpenAPI document by the stack). Signals are seeded through SignalStore.write, as the detectors
 * write them: several contests and leagues, active and beta types, an unpublished and a retired
 * type, strengths, confidences, and expiries from half a minute to a quarter hour. The app's clock
 * is moved forward to pass an expiry, so no test waits on time.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIDENCE_RANK, isServedType, SIGNAL_CATALOG, type Signal } from '../../../src/domain/signals.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { SignalStore } from '../../../src/store/redis/signals.js';
import { accountKey, keyHeaders as H } from '../../support/accounts.js';
import { get } from '../../support/http.js';
import { testSignal } from '../../support/signals.js';
import { startStack, type TestStack } from '../../support/stack.js';

/** The app's clock runs this far ahead of the wall clock (the store's own expiry on write uses Redis time). */
let offsetMs = 0;
let s: TestStack;
let store: SignalStore;
let pro: CreatedKey;
let free: CreatedKey;
/** A key on a paid plan whose entitlements leave out signals:read. */
let narrowed: CreatedKey;

const S = 1000;
const ts = () => new Date().toISOString();

/**
 * The seeded set. Served with include_beta: B1 A1 V1 W1 P1 A2 (strength order). TB (trade_burst,
 * never published) and OM (off_market_price, retired) are stored but never served.
 */
const SEED = {
  A1: testSignal('arbitrage', 'a1', 'C1', 100 * S, { status: 'active', strength: 80, confidence: 'high', detectedInMs: -60 * S, position: { position_hash: 'C1:h', router_league_id: 'L1', router_market_id: 'M1' }, related_positions: ['C1:a'] }),
  W1: testSignal('whale_trade', 'w1', 'C1', 500 * S, { strength: 60, confidence: 'medium', detectedInMs: -30 * S, position: { position_hash: 'C1:a', router_league_id: 'L1', router_market_id: 'M1' } }),
  P1: testSignal('price_move', 'p1', 'C2', 250 * S, { strength: 40, confidence: 'low', detectedInMs: -10 * S, position: { position_hash: 'C2:h', router_league_id: 'L1', router_market_id: 'M2' } }),
  B1: testSignal('block_trade', 'b1', 'C3', 800 * S, { strength: 95, confidence: 'high', detectedInMs: -100 * S, position: { position_hash: 'C3:h', router_league_id: 'L2', router_market_id: 'M3' } }),
  A2: testSignal('arbitrage', 'a2', 'C3', 60 * S, { status: 'active', strength: 30, confidence: 'low', detectedInMs: -5 * S, position: { position_hash: 'C3:a', router_league_id: 'L2', router_market_id: 'M3' }, related_positions: ['C3:h'] }),
  // About to expire (first to go when the clock moves); a contest without a league.
  V1: testSignal('volume_spike', 'v1', 'C4', 30 * S, { strength: 70, confidence: 'medium', detectedInMs: -20 * S, position: { position_hash: 'C4:h', router_league_id: null, router_market_id: 'M4' } }),
  TB: testSignal('trade_burst', 'tb', 'C2', 300 * S, { strength: 99, confidence: 'high', detectedInMs: -1 * S, position: { position_hash: 'C2:h', router_league_id: 'L1', router_market_id: 'M2' } }),
  OM: testSignal('off_market_price', 'om', 'C1', 300 * S, { status: 'retired', strength: 99, confidence: 'high', detectedInMs: -1 * S, position: { position_hash: 'C1:h', router_league_id: 'L1', router_market_id: 'M1' } }),
};
type Name = keyof typeof SEED;
const NAME_OF = new Map(Object.entries(SEED).map(([n, sig]) => [sig.signal_id, n as Name]));

beforeAll(async () => {
  s = await startStack({ catalog: null, clock: { now: () => Date.now() + offsetMs } });
  store = new SignalStore(s.rt.redis, s.rt.ks);
  pro = await accountKey(s, 'data', { plan: 'pro' });
  free = await accountKey(s, 'data', { plan: 'free' });
  narrowed = await accountKey(s, 'data', { plan: 'pro', entitlements: ['stream:realtime', 'trades:read'] });
  const byContest = new Map<string, { league: string | null; sigs: Signal[] }>();
  for (const sig of Object.values(SEED)) {
    const c = byContest.get(sig.position.router_contest_id) ?? { league: sig.position.router_league_id, sigs: [] };
    c.sigs.push(sig);
    byContest.set(sig.position.router_contest_id, c);
  }
  for (const [contestId, { league, sigs }] of byContest) {
    const served = sigs.filter((x) => isServedType(x.signal_type));
    if (served.length > 0) expect(await store.write({ contestId, leagueId: league, upserts: served, timestamp: ts() })).toBe(true);
    // The store refuses unpublished and retired types; stored anyway (another build, a hand edit), the read still never serves them.
    for (const x of sigs.filter((y) => !isServedType(y.signal_type))) {
      await s.rt.redis.hset(s.rt.ks.k('sig', contestId), x.dedupe_key, JSON.stringify(x));
      await s.rt.redis.zadd(s.rt.ks.k('sigx', contestId), String(Date.parse(x.expires_at)), x.dedupe_key);
      await s.rt.redis.zadd(s.rt.ks.k('sigidx'), String(Date.parse(x.expires_at)), `${contestId}\n${league ?? ''}`);
    }
  }
}, 60_000);
afterAll(async () => s?.close());

const signals = (query = '', k: CreatedKey = pro) => get(s.built.app, `/flow/v1/signals${query}`, H(k));
/** The names of the signals served for a query, in order. */
async function names(query: string): Promise<string[]> {
  const r = await signals(query);
  expect(r.status, query).toBe(200);
  return r.body.data.map((x: Signal) => NAME_OF.get(x.signal_id) ?? x.signal_id);
}

describe('GET /flow/v1/signals', () => {
  it('serves the live set: active types by default, beta types only with include_beta; never unpublished or retired types', async () => {
    expect(await names('')).toEqual(['A1', 'A2']);
    expect(await names('?include_beta=false')).toEqual(['A1', 'A2']);
    expect(await names('?include_beta=true')).toEqual(['B1', 'A1', 'V1', 'W1', 'P1', 'A2']);
    // Asked for by name, still never served (a known type: accepted, not an error).
    expect(await names('?include_beta=true&type=trade_burst,off_market_price')).toEqual([]);
    // Served exactly as written.
    const r = await signals('?include_beta=true&type=whale_trade');
    expect(r.body.data).toEqual([SEED.W1]);
  });

  it('meta: total before limit, returned, contest_count; limit cuts after sorting', async () => {
    const all = await signals('?include_beta=true');
    expect(all.body.meta).toEqual({ timestamp: expect.any(String), api_version: 'v1', total: 6, returned: 6, contest_count: 4 });
    const cut = await signals('?include_beta=true&limit=2');
    expect(cut.body.data.map((x: Signal) => NAME_OF.get(x.signal_id))).toEqual(['B1', 'A1']);
    expect(cut.body.meta).toMatchObject({ total: 6, returned: 2, contest_count: 4 });
    expect((await signals('?contest_id=C1,C3&include_beta=true')).body.meta).toMatchObject({ total: 4, returned: 4, contest_count: 2 });
    expect((await signals('?contest_id=nowhere')).body).toMatchObject({ data: [], meta: { total: 0, returned: 0, contest_count: 0 } });
  });

  it('sorts by strength (default) and detected_at descending, expires_at ascending', async () => {
    expect(await names('?include_beta=true&sort=strength')).toEqual(['B1', 'A1', 'V1', 'W1', 'P1', 'A2']);
    expect(await names('?include_beta=true&sort=detected_at')).toEqual(['A2', 'P1', 'V1', 'W1', 'A1', 'B1']);
    expect(await names('?include_beta=true&sort=expires_at')).toEqual(['V1', 'A2', 'A1', 'P1', 'W1', 'B1']);
    expect(await names('?include_beta=true&sort=expires_at&limit=3')).toEqual(['V1', 'A2', 'A1']);
  });

  it('every filter, alone and combined (AND)', async () => {
    const beta = 'include_beta=true';
    expect(await names(`?${beta}&contest_id=C1,C3`)).toEqual(['B1', 'A1', 'W1', 'A2']);
    expect(await names(`?${beta}&league_id=L2`)).toEqual(['B1', 'A2']);
    // A signal without a league never matches a league filter.
    expect(await names(`?${beta}&league_id=L1`)).toEqual(['A1', 'W1', 'P1']);
    expect(await names(`?${beta}&market_id=M2,M4`)).toEqual(['V1', 'P1']);
    expect(await names(`?${beta}&type=arbitrage,volume_spike`)).toEqual(['A1', 'V1', 'A2']);
    expect(await names('?type=whale_trade')).toEqual([]);
    expect(await names(`?${beta}&min_strength=60`)).toEqual(['B1', 'A1', 'V1', 'W1']);
    expect(await names(`?${beta}&min_strength=95`)).toEqual(['B1']);
    expect(await names(`?${beta}&min_strength=0`)).toHaveLength(6);
    expect(await names(`?${beta}&min_strength=100`)).toEqual([]);
    expect(await names(`?${beta}&min_confidence=medium`)).toEqual(['B1', 'A1', 'V1', 'W1']);
    expect(await names(`?${beta}&min_confidence=high`)).toEqual(['B1', 'A1']);
    expect(await names(`?${beta}&min_confidence=low`)).toHaveLength(6);
    expect(await names('?contest_id=C1&min_confidence=high')).toEqual(['A1']);
    expect(await names(`?${beta}&type=arbitrage,block_trade&league_id=L2&min_strength=50`)).toEqual(['B1']);
    expect(await names(`?${beta}&contest_id=C1&market_id=M2`)).toEqual([]);
  });

  it('position_hash matches the position and related_positions', async () => {
    // C1:a is W1's position and one of A1's related positions.
    expect(await names('?include_beta=true&position_hash=C1:a')).toEqual(['A1', 'W1']);
    expect(await names('?include_beta=true&position_hash=C3:h')).toEqual(['B1', 'A2']);
    expect(await names(`?include_beta=true&position_hash=${encodeURIComponent('C2:h,C4:h')}`)).toEqual(['V1', 'P1']);
    expect(await names('?position_hash=C3:h')).toEqual(['A2']);
  });

  it('is read fresh on every call: a new signal is served at once, a replaced one as replaced', async () => {
    expect(await names('?contest_id=C5')).toEqual([]);
    const fresh = testSignal('arbitrage', 'fresh', 'C5', 200 * S, { status: 'active', strength: 55, position: { router_league_id: 'L3' } });
    await store.write({ contestId: 'C5', leagueId: 'L3', upserts: [fresh], owns: 'arbitrage', timestamp: ts() });
    expect((await signals('?contest_id=C5')).body.data).toEqual([fresh]);
    const stronger = { ...fresh, strength: 65 };
    await store.write({ contestId: 'C5', leagueId: 'L3', upserts: [stronger], owns: 'arbitrage', timestamp: ts() });
    expect((await signals('?contest_id=C5')).body.data).toEqual([stronger]);
    await store.write({ contestId: 'C5', leagueId: 'L3', upserts: [], owns: 'arbitrage', timestamp: ts() });
    expect((await signals('?contest_id=C5')).body.data).toEqual([]);
  });

  it('refuses a bad value with 400 naming the parameter, before anything is read', async () => {
    const cases: [string, string, string][] = [
      ['min_strength=101', 'invalid_parameter', 'min_strength'],
      ['min_strength=-1', 'invalid_parameter', 'min_strength'],
      ['min_strength=abc', 'invalid_parameter', 'min_strength'],
      ['min_confidence=extreme', 'invalid_parameter', 'min_confidence'],
      ['sort=weakest', 'invalid_parameter', 'sort'],
      ['limit=0', 'invalid_parameter', 'limit'],
      ['limit=501', 'invalid_parameter', 'limit'],
      ['limit=1.5', 'invalid_parameter', 'limit'],
      ['include_beta=yes', 'invalid_parameter', 'include_beta'],
      ['type=whale', 'invalid_parameter', 'type'],
      ['type=arbitrage,,whale_trade', 'invalid_parameter', 'type'],
      ['contest_id=', 'invalid_parameter', 'contest_id'],
      ['contest_id=a,', 'invalid_parameter', 'contest_id'],
      [`position_hash=${encodeURIComponent('a\u0000b')}`, 'invalid_parameter', 'position_hash'],
      ['min_strenght=5', 'unknown_parameter', '/min_strenght'],
    ];
    for (const [query, code, parameter] of cases) {
      const r = await signals(`?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error, query).toMatchObject({ code, details: { parameter } });
    }
    // The type error lists the types a caller may use.
    expect((await signals('?type=whale')).body.error.message).toContain('whale_trade');
  });

  it('needs signals:read: 403 entitlement_required without it, 401 without a key', async () => {
    for (const k of [free, narrowed]) {
      const r = await signals('', k);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'entitlement_required', details: { missing: ['signals:read'] } });
    }
    expect((await get(s.built.app, '/flow/v1/signals')).status).toBe(401);
  });

  it('never serves an expired signal, even one still stored', async () => {
    try {
      // 45 s on: V1 (30 s of life) has expired; nothing has swept it from Redis.
      offsetMs = 45 * S;
      expect(await s.rt.redis.hexists(s.rt.ks.k('sig', 'C4'), SEED.V1.dedupe_key)).toBe(1);
      expect(await names('?include_beta=true')).toEqual(['B1', 'A1', 'W1', 'P1', 'A2']);
      expect((await signals('?include_beta=true')).body.meta).toMatchObject({ total: 5, contest_count: 3 });
      // 65 s on: A2 (60 s) too.
      offsetMs = 65 * S;
      expect(await names('')).toEqual(['A1']);
    } finally {
      offsetMs = 0;
    }
  });

  it('hostile queries never get a 5xx; what is served keeps every rule whatever the query', async () => {
    const values: Record<string, fc.Arbitrary<string>> = {
      contest_id: fc.constantFrom('C1', 'C1,C3', 'C4', 'x'.repeat(5000), ',', 'C1,C1'),
      league_id: fc.constantFrom('L1', 'L2,L1', 'null', ''),
      market_id: fc.constantFrom('M1', 'M2,M4', '\u0000'),
      position_hash: fc.constantFrom('C1:a', 'C3:h,C2:h', 'x'.repeat(9000)),
      type: fc.constantFrom('arbitrage', 'whale_trade,block_trade', 'trade_burst', 'off_market_price', 'ARBITRAGE', 'arbitrage,'.repeat(20), '__proto__', 'constructor'),
      include_beta: fc.constantFrom('true', 'false', 'TRUE', '1', ''),
      min_strength: fc.constantFrom('0', '50', '100', '100.5', '-0', '1e2', 'NaN', 'Infinity', '50.5', ' 5'),
      min_confidence: fc.constantFrom('low', 'medium', 'high', 'High', 'toString', '__proto__'),
      sort: fc.constantFrom('strength', 'detected_at', 'expires_at', 'hasOwnProperty', ''),
      limit: fc.constantFrom('1', '2', '500', '501', '0', '-1', '1e3', '9007199254740993', 'abc'),
    };
    // Every UTF-8 byte percent-encoded (a lone surrogate goes as U+FFFD; encodeURIComponent would throw); raw ones are sent as they are.
    const pct = (v: string) => (v.startsWith('raw:') ? v.slice(4) : [...Buffer.from(v, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
    const hostile = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.constantFrom('\u0000', '\uD800', '%', '\u202E', 'x'.repeat(10_000), '[]', '{}', 'raw:%E0%A4%A', 'raw:%', 'raw:%FF', 'raw:a&b=c', 'raw:%00'),
    );
    const entry = fc.oneof(
      ...Object.entries(values).map(([k, v]) => fc.tuple(fc.constant(k), fc.oneof({ weight: 3, arbitrary: v }, { weight: 1, arbitrary: hostile }))),
      fc.tuple(fc.constantFrom('foo', 'type[]', '__proto__', 'limit'), hostile),
    );
    let served = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 5 }), async (pairs) => {
        const query = pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
        const r = await signals(`?${query}`);
        expect(r.status, query).toBeLessThan(500);
        if (r.status !== 200) {
          refused++;
          expect(r.body.error.code, query).toMatch(/^(invalid_parameter|unknown_parameter|uri_too_long)$/);
          return;
        }
        const q = new URLSearchParams(query);
        const data = r.body.data as Signal[];
        const { total, returned, contest_count } = r.body.meta;
        expect(returned).toBe(data.length);
        expect(total).toBeGreaterThanOrEqual(returned);
        expect(data.length).toBeLessThanOrEqual(Number(q.get('limit') ?? 100));
        expect(contest_count).toBeLessThanOrEqual(total);
        if (data.length > 0) served++;
        for (const x of data) {
          expect(NAME_OF.get(x.signal_id), query).toMatch(/^(A1|A2|W1|P1|B1|V1)$/);
          if (q.get('include_beta') !== 'true') expect(x.status).not.toBe('beta');
          if (q.has('min_strength')) expect(x.strength).toBeGreaterThanOrEqual(Number(q.get('min_strength')));
          if (q.has('min_confidence')) expect(CONFIDENCE_RANK[x.confidence]).toBeGreaterThanOrEqual(CONFIDENCE_RANK[q.get('min_confidence') as 'low']);
        }
      }),
      { numRuns: 150 },
    );
    // Both sides were exercised: the rules above were checked on real answers, not only on refusals.
    expect(served).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  }, 60_000);
});

describe('GET /flow/v1/signals/types', () => {
  it('answers any valid key with the whole catalog; entitled and missing_entitlements describe that key', async () => {
    const paid = await get(s.built.app, '/flow/v1/signals/types', H(pro));
    expect(paid.status).toBe(200);
    expect(paid.body.data.map((e: { signal_type: string }) => e.signal_type)).toEqual(SIGNAL_CATALOG.map((d) => d.signal_type));
    // Retired types stay in the catalog so stored type strings resolve.
    expect(paid.body.data.find((e: { signal_type: string }) => e.signal_type === 'off_market_price')).toMatchObject({ status: 'retired', typical_ttl_seconds: null });
    for (const e of paid.body.data) expect(e).toMatchObject({ entitled: true, missing_entitlements: [], required_entitlements: ['signals:read'] });
    expect(paid.body.data[0]).not.toHaveProperty('published');

    for (const k of [free, narrowed]) {
      const r = await get(s.built.app, '/flow/v1/signals/types', H(k));
      expect(r.status).toBe(200);
      for (const e of r.body.data) expect(e).toMatchObject({ entitled: false, missing_entitlements: ['signals:read'] });
      expect(r.headers['x-ratelimit-remaining-minute']).toBeDefined();
    }
    expect((await get(s.built.app, '/flow/v1/signals/types')).status).toBe(401);
  });
});
