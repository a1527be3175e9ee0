/**
 * Kalshi's published rules as exact figures: the fee formulas and their rounding, the price grids,
 * request signing (checked with the public key), the per-tier token buckets, and the settings.
 */
import { describe, expect, it } from 'vitest';
import { fillFee } from '../../../src/domain/fees.js';
import { VenueError } from '../../../src/venues/errors.js';
import { HEADER_KEY, HEADER_SIGNATURE, HEADER_TIMESTAMP, KalshiSigner, signingPayload, verifyKalshiSignature } from '../../../src/venues/kalshi/auth.js';
import { KALSHI_RATE_LIMITS, KalshiConfigError, kalshiSettingsFromEnv } from '../../../src/venues/kalshi/config.js';
import { DEFAULT_FEE_SCHEDULE, feeModelOf, feeScheduleOf, orderFeeMicros, tradeFeeMicros, type KalshiFeeSchedule } from '../../../src/venues/kalshi/fees.js';
import { bandOf, dollarsText, floorOnGrid, gridOf, onGrid } from '../../../src/venues/kalshi/grid.js';
import { KalshiRest } from '../../../src/venues/kalshi/rest.js';
import { rsaPair } from './support.js';

const M = (x: string) => BigInt(Math.round(Number(x) * 1e6)); // test inputs are short decimals
const usd = (micros: bigint | null) => (micros === null ? null : Number(micros) / 1e6);

describe('fees (Kalshi fee schedule; docs.kalshi.com fee_rounding)', () => {
  const withMaker: KalshiFeeSchedule = { fee_type: 'quadratic_with_maker_fees', fee_multiplier: 1 };

  it.each([
    // contracts, price, taker fee (USD, rounded up to the cent)
    ['100', '0.50', 1.75], // 0.07 × 100 × 0.25 = 1.75 exactly: no rounding up past it
    ['1', '0.50', 0.02], // 0.0175 → 0.02
    ['10', '0.12', 0.08], // 0.07392 → 0.08
    ['400', '0.50', 7], // exactly 7.00: a float would make it 7.000000000000001 → 7.01
    ['1967.33', '0.12', 14.55], // 14.5424... fractional contracts
    ['3', '0.01', 0.01], // 0.002079 → 0.01
    ['250', '0.02', 0.35], // 0.343 → 0.35
  ])('taker: %s contracts at %s pay USD %s', (c, p, fee) => {
    expect(usd(orderFeeMicros(DEFAULT_FEE_SCHEDULE, [{ role: 'taker', price: M(p), count: M(c) }]))).toBe(fee);
  });

  it('maker fees only on quadratic_with_maker_fees series; the multiplier scales both', () => {
    expect(usd(orderFeeMicros(DEFAULT_FEE_SCHEDULE, [{ role: 'maker', price: M('0.5'), count: M('100') }]))).toBe(0);
    expect(usd(orderFeeMicros(withMaker, [{ role: 'maker', price: M('0.5'), count: M('100') }]))).toBe(0.44); // 0.4375
    expect(usd(orderFeeMicros({ fee_type: 'quadratic', fee_multiplier: 0.5 }, [{ role: 'taker', price: M('0.5'), count: M('100') }]))).toBe(0.88); // 0.875
  });

  it('each fill rounds up to the centicent; the order rounds the sum up to the cent once', () => {
    // 0.07 × 1 × 0.1 × 0.9 = 0.0063 per fill: per-fill cents would charge 0.03 for three fills.
    const fill = { role: 'taker' as const, price: M('0.1'), count: M('1') };
    expect(usd(tradeFeeMicros(DEFAULT_FEE_SCHEDULE, 'taker', fill.price, fill.count))).toBe(0.0063);
    expect(usd(orderFeeMicros(DEFAULT_FEE_SCHEDULE, [fill, fill, fill]))).toBe(0.02);
    // 0.07 × 1 × 0.123 × 0.877 = 0.00755097 → 0.0076 (up, never down)
    expect(usd(tradeFeeMicros(DEFAULT_FEE_SCHEDULE, 'taker', M('0.123'), M('1')))).toBe(0.0076);
  });

  it('the domain fee math agrees on single fills (fillFee rounds the order up to the cent)', () => {
    const model = feeModelOf(DEFAULT_FEE_SCHEDULE);
    for (const [c, p] of [[100, 0.5], [1, 0.5], [10, 0.12], [7, 0.33], [55, 0.91]] as const) {
      expect(fillFee(model, 'taker', p, c, true)).toBe(usd(orderFeeMicros(DEFAULT_FEE_SCHEDULE, [{ role: 'taker', price: M(String(p)), count: M(String(c)) }])));
    }
  });

  it('series records → schedules and quote fee models; flat fees are unknown, never guessed', () => {
    expect(feeScheduleOf(null)).toEqual(DEFAULT_FEE_SCHEDULE);
    expect(feeScheduleOf({ fee_type: 'quadratic_with_maker_fees', fee_multiplier: 2 })).toEqual({ fee_type: 'quadratic_with_maker_fees', fee_multiplier: 2 });
    expect(feeModelOf(feeScheduleOf({ fee_type: 'quadratic_with_maker_fees', fee_multiplier: 2 }))).toEqual({ kind: 'pq', taker_rate: 0.14, maker_rate: 0.035 });
    expect(feeModelOf(feeScheduleOf({ fee_type: 'flat', fee_multiplier: 1 }))).toEqual({ kind: 'unknown' });
    expect(tradeFeeMicros({ fee_type: 'flat', fee_multiplier: 1 }, 'taker', M('0.5'), M('1'))).toBeNull();
  });
});

describe('price grids (price_level_structure / price_ranges)', () => {
  const tapered = gridOf({
    price_ranges: [
      { start: '0.0000', end: '0.1000', step: '0.0010' },
      { start: '0.1000', end: '0.9000', step: '0.0100' },
      { start: '0.9000', end: '1.0000', step: '0.0010' },
    ],
  });
  const linear = gridOf({});

  it('floors a buyer\'s limit onto the market\'s own grid', () => {
    expect(floorOnGrid(linear, M('0.999'))).toBe(M('0.99'));
    expect(floorOnGrid(linear, M('0.125'))).toBe(M('0.12'));
    expect(floorOnGrid(linear, M('0.005'))).toBeNull();
    expect(floorOnGrid(tapered, M('0.0995'))).toBe(M('0.099'));
    expect(floorOnGrid(tapered, M('0.105'))).toBe(M('0.1'));
    expect(floorOnGrid(tapered, M('0.955'))).toBe(M('0.955'));
    expect(floorOnGrid(tapered, M('0.0005'))).toBeNull();
    expect(onGrid(tapered, M('0.555'))).toBe(false);
    expect(onGrid(tapered, M('0.55'))).toBe(true);
    expect(bandOf(tapered)).toEqual({ min: M('0.001'), max: M('0.999') });
    expect(bandOf(linear)).toEqual({ min: M('0.01'), max: M('0.99') });
  });

  it('prints prices the way Kalshi takes them', () => {
    expect(dollarsText(M('0.02'))).toBe('0.0200');
    expect(dollarsText(M('0.125'))).toBe('0.1250');
    expect(dollarsText(1_234n)).toBe('0.001234');
  });
});

describe('request signing (RSA-PSS SHA-256 over timestamp + METHOD + path)', () => {
  it('produces the documented header set, verifiable with the public key', () => {
    const { privateKeyPem, publicKeyPem } = rsaPair();
    const signer = new KalshiSigner({ keyId: 'a952bcbe-ec3b-4b5b-b8f9-11dae589608c', privateKeyPem });
    const h = signer.headers('get', '/trade-api/v2/portfolio/orders?limit=5', 1_703_123_456_789);
    expect(Object.keys(h).sort()).toEqual([HEADER_KEY, HEADER_SIGNATURE, HEADER_TIMESTAMP].sort());
    expect(h[HEADER_KEY]).toBe('a952bcbe-ec3b-4b5b-b8f9-11dae589608c');
    expect(h[HEADER_TIMESTAMP]).toBe('1703123456789');
    // The query string is not signed, the method is upper-cased: the docs' own example.
    expect(signingPayload(1_703_123_456_789, 'get', '/trade-api/v2/portfolio/orders?limit=5')).toBe('1703123456789GET/trade-api/v2/portfolio/orders');
    expect(Buffer.from(h[HEADER_SIGNATURE]!, 'base64')).toHaveLength(256);
    expect(verifyKalshiSignature(publicKeyPem, 'GET', '/trade-api/v2/portfolio/orders', h)).toBe(true);
    // The signature binds method, path and time.
    expect(verifyKalshiSignature(publicKeyPem, 'POST', '/trade-api/v2/portfolio/orders', h)).toBe(false);
    expect(verifyKalshiSignature(publicKeyPem, 'GET', '/trade-api/v2/portfolio/balance', h)).toBe(false);
    expect(verifyKalshiSignature(publicKeyPem, 'GET', '/trade-api/v2/portfolio/orders', { ...h, [HEADER_TIMESTAMP]: '1703123456790' })).toBe(false);
    // PSS is randomized: two signatures of one message differ, both verify.
    const again = signer.headers('GET', '/trade-api/ws/v2', 5);
    const twice = signer.headers('GET', '/trade-api/ws/v2', 5);
    expect(again[HEADER_SIGNATURE]).not.toBe(twice[HEADER_SIGNATURE]);
    expect(verifyKalshiSignature(publicKeyPem, 'GET', '/trade-api/ws/v2', twice)).toBe(true);
  });

  it('refuses a key that is not RSA at construction', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => new KalshiSigner({ keyId: 'k', privateKeyPem: ec })).toThrow(/must be RSA/);
  });
});

describe('rate limits (docs.kalshi.com/getting_started/rate_limits)', () => {
  it('the REST client holds one second of read budget and two of write budget per tier', () => {
    const rest = new KalshiRest({ baseUrl: 'http://127.0.0.1:1/trade-api/v2', signer: null, tier: 'basic', timeoutMs: 1000, clock: () => 0 });
    expect([rest.reads.capacity, rest.reads.refillPerSecond, rest.writes.capacity, rest.writes.refillPerSecond]).toEqual([20, 20, 20, 10]);
    expect(KALSHI_RATE_LIMITS.prime).toEqual({ read: 400, write: 400 });
  });
});

describe('settings from the environment', () => {
  it('defaults to Kalshi\'s public hosts, no credentials, Basic tier', () => {
    expect(kalshiSettingsFromEnv({})).toMatchObject({
      restBaseUrl: 'https://api.elections.kalshi.com/trade-api/v2',
      wsUrl: 'wss://api.elections.kalshi.com/trade-api/ws/v2',
      keyId: null,
      accountId: null,
      tier: 'basic',
      maxMarkets: 100,
      includeMultivariate: false,
    });
    expect(
      kalshiSettingsFromEnv({
        FLOW_KALSHI_BASE_URL: 'http://127.0.0.1:9000/trade-api/v2/',
        FLOW_KALSHI_WS_URL: 'ws://127.0.0.1:9000/trade-api/ws/v2',
        FLOW_KALSHI_API_KEY_ID: 'k',
        FLOW_KALSHI_PRIVATE_KEY_PATH: '/keys/kalshi.pem',
        FLOW_KALSHI_ACCOUNT_ID: 'acct_1',
        FLOW_KALSHI_TIER: 'Premier',
        FLOW_KALSHI_SERIES: 'KXELONMARS, KXCPI',
        FLOW_KALSHI_MAX_MARKETS: '10',
      }),
    ).toMatchObject({ restBaseUrl: 'http://127.0.0.1:9000/trade-api/v2', keyId: 'k', privateKeyPath: '/keys/kalshi.pem', accountId: 'acct_1', tier: 'premier', series: ['KXELONMARS', 'KXCPI'], maxMarkets: 10 });
  });

  it.each([
    [{ FLOW_KALSHI_API_KEY_ID: 'k' }, /needs FLOW_KALSHI_PRIVATE_KEY_PATH/],
    [{ FLOW_KALSHI_PRIVATE_KEY_PATH: '/x' }, /needs FLOW_KALSHI_API_KEY_ID/],
    [{ FLOW_KALSHI_TIER: 'gold' }, /FLOW_KALSHI_TIER/],
    [{ FLOW_KALSHI_BASE_URL: 'ftp://x' }, /FLOW_KALSHI_BASE_URL/],
    [{ FLOW_KALSHI_WS_URL: 'https://x' }, /FLOW_KALSHI_WS_URL/],
    [{ FLOW_KALSHI_MAX_MARKETS: '0' }, /FLOW_KALSHI_MAX_MARKETS/],
  ])('refuses %o by name', (env, msg) => {
    expect(() => kalshiSettingsFromEnv(env)).toThrow(KalshiConfigError);
    expect(() => kalshiSettingsFromEnv(env)).toThrow(msg);
  });

  it('an unsigned request to an account endpoint never leaves: fatal auth_failed', async () => {
    const rest = new KalshiRest({ baseUrl: 'http://127.0.0.1:1/trade-api/v2', signer: null, tier: 'basic', timeoutMs: 1000 });
    await expect(rest.balance()).rejects.toBeInstanceOf(VenueError);
    await expect(rest.balance()).rejects.toMatchObject({ kind: 'fatal', code: 'auth_failed' });
    expect(rest.stats.requests).toBe(0);
  });
});

describe('feed metrics', () => {
  it('every counter reads its own figure from the adapter\'s stats', async () => {
    const { KALSHI_FEED_METRICS } = await import('../../../src/venues/kalshi/metrics.js');
    const names = KALSHI_FEED_METRICS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^flow_kalshi_[a-z_]+_total$/);
    const stats = { frames: 1, seq_gaps: 2, book_errors: 3, resnapshots: 4, trade_gaps: 5, parse_errors: 6, reconnects: 7, rest: { requests: 8, failures: 0, rate_limited: 9 }, read_waits: 10, write_waits: 1 } as never;
    expect(KALSHI_FEED_METRICS.map((m) => m.read(stats))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 11]);
  });
});
