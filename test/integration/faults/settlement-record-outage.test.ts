/**
 * Issue 11 item 6, the durable trigger: the settlement recorder takes the simulator's settlement
 * feeds (every venue that reports settlements, the practice book included) and writes them to
 * PostgreSQL. With PostgreSQL down (a private server, SIGKILLed) the reports wait and flush says
 * they are not recorded; once it is back they land without a restart, each venue's results once.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettlementRecorder } from '../../../pipelines/settlement/recorder.js';
import { createPool, ensureDatabase, migrate, type Pool } from '../../../src/store/pg/pool.js';
import { createSimAdapters } from '../../../src/venues/sim/index.js';
import { SimMarket } from '../../../src/sim/index.js';
import type { VenueAdapter } from '../../../src/venues/types.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../support/private-servers.js';

let pg: PrivatePostgres;
let pool: Pool;
let market: SimMarket;
let adapters: VenueAdapter[];
let recorder: SettlementRecorder;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = pg.url('flow_settle');
  await ensureDatabase(url);
  pool = createPool(url, 2);
  await migrate(pool);
  market = new SimMarket({ seed: 5, now: Date.now() });
  market.freeze(true);
  adapters = createSimAdapters(market);
  for (const a of adapters) await a.connect();
  recorder = new SettlementRecorder({ pool, adapters, log: pino({ level: 'silent' }), retryBaseMs: 50, retryMaxMs: 250 }).start();
}, 120_000);
afterAll(async () => {
  await pg?.start().catch(() => undefined);
  await recorder?.stop(1_000);
  for (const a of adapters ?? []) await a.close();
  await pool?.end();
  await pg?.stop();
}, 60_000);

describe('the settlement recorder', () => {
  it('keeps the feeds’ reports while PostgreSQL is down and records them once it is back', async () => {
    const contest = market.catalog.contests.find((c) => c.status === 'open' && market.catalog.positions.some((p) => p.contest_id === c.id && p.market_key === 'moneyline'))!;
    const home = market.catalog.positions.find((p) => p.contest_id === contest.id && p.market_key === 'moneyline')!;
    // Books on two venues, so their feeds name the position.
    for (const partner_id of ['sim_exchange', 'sim_book01']) market.setQuote({ partner_id, position_hash: home.position_hash, price: 0.5, available: 100 });

    await pg.kill();
    market.settle(contest.id, { winner_participant_id: home.participant_id! });
    expect(await recorder.flush(600)).toBe(false);

    await pg.start();
    expect(await recorder.flush(20_000)).toBe(true);
    const { rows } = await pool.query<{ partner_id: string; result: string; pending: boolean }>(
      `SELECT ps.partner_id, ps.result, cs.pending FROM position_settlements ps JOIN contest_settlements cs USING (partner_id, contest_id)
        WHERE ps.position_hash = $1 ORDER BY ps.partner_id`,
      [home.position_hash],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { partner_id: 'practice', result: 'win', pending: true },
        { partner_id: 'sim_book01', result: 'win', pending: true },
        { partner_id: 'sim_exchange', result: 'win', pending: true },
      ]),
    );
    // The practice book settles every position of the contest.
    const { rows: all } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM position_settlements WHERE partner_id = 'practice' AND contest_id = $1", [contest.id]);
    expect(all[0]!.n).toBe(market.catalog.positions.filter((p) => p.contest_id === contest.id).length);
  }, 90_000);
});
