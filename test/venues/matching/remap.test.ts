/**
 * remapAdapter on a real adapter (the simulator's exchange, in process): quotes, streamed quotes and
 * trade prints come out with merged position hashes, unlinked positions are not quoted, filters and
 * depth reads given merged ids reach the venue as its own ids. (The replay test does the same over
 * the network with Kalshi and Polymarket.)
 */
import { describe, expect, it } from 'vitest';
import { parsePositionHash, positionHash } from '../../../src/domain/hashes.js';
import { remapAdapter } from '../../../src/venues/matching/index.js';
import { createSimAdapters } from '../../../src/venues/sim/index.js';
import { SimMarket } from '../../../src/sim/index.js';
import type { NormalizedQuote, NormalizedTrade } from '../../../src/venues/types.js';

const NOW = Date.UTC(2026, 0, 10, 12);

describe('remapAdapter', () => {
  it('speaks merged ids out of the venue and the venue ids into it', async () => {
    const m = new SimMarket({ seed: 5, now: NOW });
    m.freeze(true);
    const [exchange] = createSimAdapters(m, { clock: () => NOW });
    await exchange!.connect();
    const native = await exchange!.fetchQuotes();
    // Two positions of one contest: one merged elsewhere, one unlinked; the rest untouched.
    const contest = parsePositionHash(native[0]!.position_hash)!.contest_id;
    const [kept, dropped] = native.filter((q) => parsePositionHash(q.position_hash)!.contest_id === contest);
    const merged = positionHash({ contest_id: 'mx_test', market_id: 'winner', side_key: 'yes', variable: 0, participant_id: 'mx_x_team', timeframe: 'ft' });
    const seen = remapAdapter(exchange!, { [kept!.position_hash]: merged, [dropped!.position_hash]: null }, {});

    const qs = await seen.fetchQuotes();
    expect(qs.length).toBe(native.length - 1);
    const mq = qs.find((q) => q.position_hash === merged)!;
    expect(mq).toEqual({ ...native.find((q) => q.position_hash === kept!.position_hash)!, position_hash: merged, ts_init: mq.ts_init, ts_event: mq.ts_event });
    expect(mq.venue_side_key).toBe(kept!.venue_side_key);
    expect(qs.some((q) => q.position_hash === dropped!.position_hash || q.position_hash === kept!.position_hash)).toBe(false);

    expect((await seen.fetchQuotes({ position_hashes: [merged] })).map((q) => q.position_hash)).toEqual([merged]);
    expect((await seen.fetchQuotes({ contest_ids: ['mx_test'] })).map((q) => q.position_hash)).toEqual([merged]);
    expect((await seen.fetchQuotes({ position_hashes: [dropped!.position_hash] }))).toEqual([]);
    const depth = await seen.fetchDepth(merged);
    expect(depth.position_hash).toBe(merged);
    expect(depth.levels.length).toBeGreaterThan(0);

    const streamed: NormalizedQuote[] = [];
    const unsub = seen.subscribeQuotes((q) => streamed.push(q), { contest_ids: ['mx_test'] });
    m.setQuote({ partner_id: exchange!.id, position_hash: kept!.position_hash, price: 0.41, available: 500 });
    m.setQuote({ partner_id: exchange!.id, position_hash: dropped!.position_hash, price: 0.55, available: 500 });
    unsub();
    expect(streamed.map((q) => [q.position_hash, q.price])).toEqual([[merged, 0.41]]);

    const prints: NormalizedTrade[] = [];
    seen.subscribeTrades((t) => prints.push(t), { contest_ids: ['mx_test'] });
    m.emitTrade({ partner_id: exchange!.id, position_hash: kept!.position_hash, price: 0.4, size_contracts: 10, taker_action: 'buy' });
    m.emitTrade({ partner_id: exchange!.id, position_hash: dropped!.position_hash, price: 0.4, size_contracts: 10, taker_action: 'buy' });
    expect(prints.map((t) => [t.position_hash, t.price, t.size_contracts])).toEqual([[merged, 0.4, 10]]);
    await seen.close();
  });
});
