/**
 * GET contests/:id/liquidity names its stream position: meta.event_id is the id of the last
 * liquidity event the snapshot reflects (null before the first), and a recomputation reaches the
 * API's cached copy through the liquidity-changed topic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogAppend } from '../../../src/store/redis/eventlog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { startFullStack, type FullStack } from '../../support/full-stack.js';

let f: FullStack;
let hot: HotState;
beforeAll(async () => {
  f = await startFullStack();
  hot = new HotState(f.stack.rt.redis, f.stack.rt.ks);
}, 60_000);
afterAll(async () => f?.close());

async function liquidity(contest: string): Promise<{ status: number; body: any }> {
  const r = await f.stack.built.app.inject({ method: 'GET', url: `/flow/v1/contests/${contest}/liquidity`, headers: f.auth });
  return { status: r.statusCode, body: JSON.parse(r.body) };
}
const liq = (n: number): LogAppend => ({ channel: 'liquidity', league_id: 'lg_fb', event: JSON.stringify({ type: 'liquidity.update', contest_id: 'ct_1', changed_entries: [], n }) });
const ticks: LogAppend = { channel: 'ticks', league_id: 'lg_fb', event: '{"type":"ticks","contest_id":"ct_1","ticks":[]}' };

describe('meta.event_id', () => {
  it('is null for a contest with nothing stored, and for liquidity no event has described yet', async () => {
    const empty = await liquidity('ct_2');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: [], meta: { timestamp: expect.any(String), api_version: 'v1', event_id: null } });
    await hot.writeComputed('ct_3', 1, '[]', '{}', []);
    expect((await liquidity('ct_3')).body.meta.event_id).toBeNull();
  });

  it('is the last liquidity event of the stored snapshot, and follows every recomputation', async () => {
    const w1 = await hot.writeComputed('ct_1', 1, '[]', '{}', [], { events: [liq(1), liq(2), ticks] });
    expect(w1 && w1.lastLiquidityEventId).toMatch(/^\d+-\d+$/);
    const first = await liquidity('ct_1');
    expect(first.body.meta).toEqual({ timestamp: expect.any(String), api_version: 'v1', event_id: w1 && w1.lastLiquidityEventId });
    // A ticks event is not a liquidity event: the snapshot's position stays.
    const w2 = await hot.writeComputed('ct_1', 2, '[]', '{}', [], { events: [ticks] });
    expect(w2 && w2.lastLiquidityEventId).toBeNull();
    const w3 = await hot.writeComputed('ct_1', 3, '[]', '{}', [], { events: [liq(3)] });
    const id3 = w3 && w3.lastLiquidityEventId;
    // The cached copy is dropped by the liquidity-changed message (or, were it lost, revalidated within a second).
    let r = await liquidity('ct_1');
    for (let i = 0; i < 100 && r.body.meta.event_id !== id3; i++) {
      await new Promise((res) => setTimeout(res, 20));
      r = await liquidity('ct_1');
    }
    expect(r.body.meta.event_id).toBe(id3);
  });
});
