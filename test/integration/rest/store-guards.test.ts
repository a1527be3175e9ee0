/**
 * Every value is validated before a store sees it (issue 8 item 4): a NUL byte, an over-long id, an
 * integer beyond the safe range or a timestamp outside any realistic range is a 400
 * invalid_parameter on every route, never a 500 from PostgreSQL or a 503 from ClickHouse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPlayerJwt } from '../../../src/jwt.js';
import { startFullStack, type FullStack } from '../../support/full-stack.js';

let f: FullStack;
beforeAll(async () => {
  f = await startFullStack();
}, 60_000);
afterAll(async () => f?.close());

const app = () => f.stack.built.app;
async function call(method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = f.auth) {
  const r = await app().inject({
    method,
    url,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
}
const expect400 = (r: { status: number; body: any }, what: string) => {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(400);
  expect(r.body.error.code, what).toBe('invalid_parameter');
};

const NUL = '%00';
describe('a NUL byte in a path id or a query value', () => {
  const gets = [
    `/flow/v1/leagues/lg${NUL}`,
    `/flow/v1/participants/p${NUL}`,
    `/flow/v1/participants?league_id=lg${NUL}`,
    `/flow/v1/contests?league_id=lg${NUL}`,
    `/flow/v1/contests?status=open${NUL}`,
    `/flow/v1/contests?parent_contest_id=c${NUL}`,
    `/flow/v1/contests?q=ab${NUL}`,
    `/flow/v1/contests?cursor=c${NUL}`,
    `/flow/v1/contests/c${NUL}`,
    `/flow/v1/contests/c${NUL}/markets`,
    `/flow/v1/markets/m${NUL}`,
    `/flow/v1/partners/p${NUL}`,
    `/flow/v1/contests/c${NUL}/liquidity`,
    `/flow/v1/contests/c${NUL}/state`,
    `/flow/v1/depth/a${NUL}b`,
    `/flow/v1/contests/c${NUL}/price-history`,
    `/flow/v1/contests/c1/price-history?partner_id=p${NUL}`,
    `/flow/v1/contests/c1/price-history?position_hash=h${NUL}`,
    `/flow/v1/trades?contest_id=c${NUL}`,
    `/flow/v1/trades?position_hash=h${NUL}`,
    `/flow/v1/trades?contest_id=c1&partner=p${NUL}`,
  ];
  for (const url of gets) it(`GET ${url} is 400 invalid_parameter`, async () => expect400(await call('GET', url), url));

  it('in a body id is 400 invalid_parameter', async () => {
    expect400(await call('POST', '/flow/v1/contest-state/batch', { contest_ids: ['c\u0000'] }), 'batch');
  });
  it('on the simulator control API too', async () => {
    const a = f.admin;
    expect400(await call('POST', '/sim/v1/quotes', { partner_id: 'sim_exchange\u0000', position_hash: 'h', price: 0.5, available: 1 }, a), 'quotes');
    expect400(await call('POST', `/sim/v1/contests/c${NUL}/state`, { game_status: 'live' }, a), 'state');
    expect400(await call('POST', `/sim/v1/accounts/a${NUL}/connect`, { partner_id: 'sim_exchange', balance: 1 }, a), 'connect');
  });
});

describe('a signed player token whose sub no store could hold', () => {
  it('is 401, not a 500 from the account lookup', async () => {
    for (const sub of ['acct\u0000x', 'a'.repeat(5_000)]) {
      const token = signPlayerJwt(f.stack.config.jwtSecret, sub, 600);
      const r = await call('GET', '/flow/v1/leagues', undefined, { authorization: `Bearer ${token}` });
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
  });
});

describe('ids are bounded', () => {
  it('an id longer than 200 characters is 400 on every id parameter', async () => {
    const long = 'x'.repeat(201);
    expect400(await call('GET', `/flow/v1/contests/${long}/state`), 'state');
    expect400(await call('GET', `/flow/v1/trades?contest_id=${long}`), 'trades');
    expect400(await call('POST', '/sim/v1/quotes', { partner_id: long, position_hash: 'h', price: 0.5, available: 1 }, f.admin), 'quotes');
  });
});

describe('integers beyond the safe range and unrealistic times', () => {
  it('trades: since/until beyond 2^53 or past year 2286 are 400, not 503 history_unavailable', async () => {
    for (const q of ['since=9007199254740993', 'until=9007199254740993', 'until=9999999999999999', 'since=' + '9'.repeat(40), 'until=9999-12-31T00:00:00Z']) {
      expect400(await call('GET', `/flow/v1/trades?contest_id=c1&${q}`), q);
    }
  });
  it('price history: from/to beyond the range are 400', async () => {
    for (const q of ['to=9007199254740993', 'from=-1', 'to=1e3']) expect400(await call('GET', `/flow/v1/contests/c1/price-history?${q}`), q);
  });
  it('limits far beyond the maximum are 400', async () => {
    expect400(await call('GET', '/flow/v1/contests?limit=9007199254740993'), 'limit');
    expect400(await call('GET', '/flow/v1/trades?contest_id=c1&limit=1e400'), 'limit');
  });
  it('POST /sim/v1/trades: a huge or negative executed_at is 400 and no print is emitted', async () => {
    const position = f.market.catalog.positions[0]!;
    const trade = { partner_id: 'sim_exchange', position_hash: position.position_hash, price: 0.5, size_contracts: 10, taker_action: 'buy' };
    let emitted = 0;
    const stop = f.market.onTrade(() => void emitted++);
    for (const executed_at of [1e20, Number.MAX_SAFE_INTEGER + 2, -1, '275760-09-13T00:00:00Z', '9999-12-31T00:00:00Z', 1.5]) {
      expect400(await call('POST', '/sim/v1/trades', { ...trade, executed_at }, f.admin), `executed_at ${executed_at}`);
    }
    stop();
    expect(emitted).toBe(0);
    // A realistic time still works.
    const ok = await call('POST', '/sim/v1/trades', { ...trade, executed_at: Date.now() - 1000 }, f.admin);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
  it('POST /sim/v1 numbers beyond any realistic size are 400', async () => {
    const position = f.market.catalog.positions[0]!;
    const base = { partner_id: 'sim_exchange', position_hash: position.position_hash, price: 0.5 };
    expect400(await call('POST', '/sim/v1/quotes', { ...base, available: 1e300 }, f.admin), 'available');
    expect400(await call('POST', '/sim/v1/trades', { ...base, size_contracts: 1e300, taker_action: 'buy' }, f.admin), 'size');
    expect400(await call('POST', '/sim/v1/accounts/acct_1/connect', { partner_id: 'sim_exchange', balance: 1e300 }, f.admin), 'balance');
  });
});

describe('/sim/v1 404 codes are the not_found family', () => {
  it('an unknown partner, position, contest or participant is 404 <thing>_not_found', async () => {
    const position = f.market.catalog.positions[0]!;
    const contest = position.contest_id;
    const cases: [string, string, unknown, string][] = [
      ['/sim/v1/quotes', 'partner_not_found', { partner_id: 'nope', position_hash: position.position_hash, price: 0.5, available: 1 }, 'partner'],
      ['/sim/v1/quotes', 'position_not_found', { partner_id: 'sim_exchange', position_hash: 'no:such:pos', price: 0.5, available: 1 }, 'position'],
      ['/sim/v1/contests/no_such_contest/state', 'contest_not_found', { game_status: 'live' }, 'contest'],
      [`/sim/v1/contests/${contest}/state`, 'participant_not_found', { winner_participant_id: 'nobody' }, 'participant'],
    ];
    for (const [url, code, body, what] of cases) {
      const r = await call('POST', url, body, f.admin);
      expect(r.status, what).toBe(404);
      expect(r.body.error.code, what).toBe(code);
      expect(r.body.error.code).toMatch(/(^|_)not_found$/);
    }
  });
});
