import { describe, expect, it } from 'vitest';
import { computeContest } from '../../../src/compute/contest.js';
import type { ContestInput, PositionInput, TickEntry, VenueQuote } from '../../../src/compute/types.js';
import { NOW_MS, position, quote } from './helpers.js';

function contest(positions: PositionInput[], now = NOW_MS): ContestInput {
  return { contest_id: 'ct1', positions, now_ms: now };
}

/** The moneyline of docs/pricing.md: V1, V2 two-sided, V3 home only, V4 an outlier on both sides. */
function moneyline(withOutlier: boolean): PositionInput[] {
  const home: VenueQuote[] = [
    quote('v1', 0.52, 900, { liquidity_hash: 'v1:h', fee: { kind: 'pq', taker_rate: 0.07, maker_rate: 0.0175 } }),
    quote('v2', 0.55, 2500, { liquidity_hash: 'v2:h' }),
    quote('v3', 0.54, 1600, { liquidity_hash: 'v3:h', fee: { kind: 'unknown' } }),
  ];
  const away: VenueQuote[] = [
    quote('v1', 0.5, 400, { liquidity_hash: 'v1:a', venue_side_key: 'away' }),
    quote('v2', 0.47, 2500, { liquidity_hash: 'v2:a', venue_side_key: 'away' }),
  ];
  if (withOutlier) {
    home.push(quote('v4', 0.8, 900, { liquidity_hash: 'v4:h' }));
    away.push(quote('v4', 0.25, 900, { liquidity_hash: 'v4:a', venue_side_key: 'away' }));
  }
  return [
    position('ct1:ml:home:0:ph:ft', home, { group_key: 'ml' }),
    position('ct1:ml:away:0:pa:ft', away, { group_key: 'ml', side_key: 'away' }),
  ];
}

describe('computeContest: consensus, outliers, edges', () => {
  const result = computeContest(contest(moneyline(true)));
  const [home, away] = result.positions;

  it('matches the hand-computed consensus and ignores the outlier venue', () => {
    // docs/pricing.md worked example: 0.53176832 / 0.46823168 rounded to six decimals.
    expect(home.consensus_price).toBe(0.531768);
    expect(away.consensus_price).toBe(0.468232);
    const clean = computeContest(contest(moneyline(false))).positions;
    expect(clean[0].consensus_price).toBe(home.consensus_price);
    expect(clean[1].consensus_price).toBe(away.consensus_price);
  });

  it('copies the position fields and has no ladder outputs on a moneyline', () => {
    expect(home).toMatchObject({
      position_hash: 'ct1:ml:home:0:ph:ft',
      contest_id: 'ct1',
      title: 'title ct1:ml:home:0:ph:ft',
      market_key: 'moneyline',
      side_key: 'home',
      variable: 0,
      participant_id: 'p-ct1:ml:home:0:ph:ft',
      participant_name: 'Name ct1:ml:home:0:ph:ft',
      participant_image_url: null,
      consensus_line: null,
      distribution_prices: null,
      paper_bettable: true,
    });
  });

  it('edges are consensus minus venue price, for every listed venue including the outlier', () => {
    expect(home.edges).toEqual([
      { partner_id: 'v1', edge: 0.011768 },
      { partner_id: 'v2', edge: -0.018232 },
      { partner_id: 'v3', edge: -0.008232 },
      { partner_id: 'v4', edge: -0.268232 },
    ]);
  });

  it('lists every venue with odds and fee packets (null when fees are unknown)', () => {
    expect(home.partner_liquidities.map((l) => l.partner_id)).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(home.partner_liquidities[0]).toEqual({
      partner_id: 'v1',
      partner_name: 'V1',
      price: 0.52,
      american_odds: '-108', // 100·0.52/0.48 = 108.33
      available: 900,
      liquidity_hash: 'v1:h',
      // 0.52 + 0.07·0.52·0.48 = 0.537472; 0.52 + 0.0175·0.2496 = 0.524368; 100·0.07·0.48 = 3.36; 100·0.0175·0.48 = 0.84
      fee_packet: { taker_price: 0.537472, maker_price: 0.524368, taker_fee: 3.36, maker_fee: 0.84 },
      as_of: '2026-03-01T11:59:59.000Z',
      is_stale: false,
    });
    expect(home.partner_liquidities[2].fee_packet).toBeNull();
    expect(home.partner_liquidities[3].american_odds).toBe('-400');
  });

  it('flags the outlier on its tick with the real-book median, and only it', () => {
    const byHash = new Map(result.ticks.map((t) => [t.liquidity_hash, t]));
    // home real books 0.52, 0.54, 0.55, 0.80 → median 0.545; 0.80 is 0.255 away.
    expect(byHash.get('v4:h')).toMatchObject({ outlier: true, median: 0.545 });
    expect(byHash.get('v1:h')).toMatchObject({ outlier: false, median: 0.545 });
    // away real books 0.25, 0.47, 0.50 → median 0.47; 0.25 is 0.22 away.
    expect(byHash.get('v4:a')).toMatchObject({ outlier: true, median: 0.47 });
    expect(byHash.get('v2:a')).toMatchObject({ outlier: false, median: 0.47 });
  });

  it('builds complete tick entries', () => {
    const t = result.ticks.find((x) => x.liquidity_hash === 'v2:h') as TickEntry;
    expect(t).toEqual({
      partner_id: 'v2',
      partner_name: 'V2',
      price: 0.55,
      american_odds: '-122',
      available: 2500,
      liquidity_hash: 'v2:h',
      fee_packet: { taker_price: 0.55, maker_price: 0.55, taker_fee: 0, maker_fee: 0 },
      position_hash: 'ct1:ml:home:0:ph:ft',
      actionable: true,
      buy_id: `v2:h@${NOW_MS - 5_000}`,
      source: 'polling',
      outlier: false,
      median: 0.545,
      as_of: '2026-03-01T11:59:59.000Z',
      is_stale: false,
    });
  });

  it('returns depth for each position', () => {
    expect(result.depth.map((d) => d.position_hash)).toEqual(['ct1:ml:home:0:ph:ft', 'ct1:ml:away:0:pa:ft']);
    expect(result.depth[0].partners.map((p) => [p.partner_id, p.best_price, p.total_available])).toEqual([
      ['v1', 0.52, 900],
      ['v2', 0.55, 2500],
      ['v3', 0.54, 1600],
      ['v4', 0.8, 900],
    ]);
  });
});

describe('computeContest: stale quotes in the median and the consensus', () => {
  // Three fresh real books at 0.50-0.52 and a deep stale one at 0.60.
  const quotes = (staleAfter: number) => [
    quote('v1', 0.5, 1_000, { liquidity_hash: 'v1:h' }),
    quote('v2', 0.51, 1_000, { liquidity_hash: 'v2:h' }),
    quote('v3', 0.52, 1_000, { liquidity_hash: 'v3:h' }),
    quote('v4', 0.6, 100_000, { liquidity_hash: 'v4:h', stale_after_ms: staleAfter }),
  ];
  const one = (staleAfter: number) => computeContest(contest([position('ph', quotes(staleAfter), { group_key: 'solo' })]));

  it('a stale quote moves neither the median nor the consensus while fresh quotes price the position', () => {
    const stale = one(NOW_MS - 1);
    expect(stale.ticks.map((t) => t.median)).toEqual([0.51, 0.51, 0.51, 0.51]);
    // Raw one-member mean of v1..v3, equal weights: 0.51.
    expect(stale.positions[0].consensus_price).toBe(0.51);
    const fresh = one(NOW_MS);
    expect(fresh.ticks[0].median).toBe(0.515);
    expect(fresh.positions[0].consensus_price).not.toBe(0.51);
  });

  it('stale quotes still price a position nothing fresh quotes', () => {
    const r = computeContest(contest([position('ph', [quote('v4', 0.6, 100_000, { stale_after_ms: NOW_MS - 1 })], { group_key: 'solo' })]));
    expect(r.positions[0].consensus_price).toBe(0.6);
    expect(r.positions[0].partner_liquidities[0].is_stale).toBe(true);
  });
});

describe('computeContest: withholding', () => {
  // c lists the participant on the other side from a and b: withheld everywhere.
  const quotes = [
    quote('a', 0.5, 400, { liquidity_hash: 'a:x' }),
    quote('b', 0.52, 900, { liquidity_hash: 'b:x' }),
    quote('c', 0.3, 5000, { liquidity_hash: 'c:x', venue_side_key: 'away' }),
  ];
  const r = computeContest(contest([position('ph', quotes, { group_key: 'solo' })]));
  const p = r.positions[0];

  it('drops the withheld venue from liquidity, edges, ticks, depth and snapshot', () => {
    expect(p.partner_liquidities.map((l) => l.partner_id)).toEqual(['a', 'b']);
    expect(p.edges.map((e) => e.partner_id)).toEqual(['a', 'b']);
    expect(r.ticks.map((t) => t.partner_id)).toEqual(['a', 'b']);
    expect(r.depth[0].partners.map((d) => d.partner_id)).toEqual(['a', 'b']);
    expect(Object.keys(r.snapshot.quotes)).toEqual(['a:x', 'b:x']);
  });

  it('keeps it out of the consensus', () => {
    // One-member group: raw weighted mean, a at 0.5·√400 = 10, b at 0.5·√900 = 15 → (5 + 7.8)/25 = 0.512.
    expect(p.consensus_price).toBe(0.512);
  });

  it('withholds nothing when two venues disagree 1-1', () => {
    const two = computeContest(contest([position('ph', quotes.slice(1), { group_key: 'solo' })]));
    expect(two.positions[0].partner_liquidities.map((l) => l.partner_id)).toEqual(['b', 'c']);
  });

  it('a withheld venue alone does not make a position paper-bettable', () => {
    const q = [
      quote('a', 0.5, 0.5, { liquidity_hash: 'a:x' }),
      quote('b', 0.52, 0, { liquidity_hash: 'b:x' }),
      quote('c', 0.3, 5000, { liquidity_hash: 'c:x', venue_side_key: 'away' }),
    ];
    expect(computeContest(contest([position('ph', q)])).positions[0].paper_bettable).toBe(false);
  });
});

describe('computeContest: paper_bettable', () => {
  const one = (q: VenueQuote) => computeContest(contest([position('ph', [q])])).positions[0];

  it('needs a quote with at least USD 1', () => {
    expect(one(quote('a', 0.5, 1)).paper_bettable).toBe(true);
    expect(one(quote('a', 0.5, 0.99)).paper_bettable).toBe(false);
  });

  it('needs a tradable price', () => {
    expect(one(quote('a', 1, 100)).paper_bettable).toBe(false);
  });

  it('is false with no quote at all, and the consensus is null', () => {
    const p = computeContest(contest([position('ph', [])])).positions[0];
    expect(p).toMatchObject({ paper_bettable: false, consensus_price: null, edges: [], partner_liquidities: [] });
  });
});

describe('computeContest: ladders', () => {
  // Total ladder, one venue per line, fair prices (over + under = 1) so devig leaves them unchanged.
  const lines: [number, number][] = [
    [210.5, 0.58],
    [211.5, 0.52],
    [212.5, 0.46],
  ];
  const positions: PositionInput[] = [];
  for (const [line, over] of lines) {
    const group = `tot:${line}`;
    positions.push(
      position(`ct1:tot:over:${line}:pover:ft`, [quote('v1', over, 500, { liquidity_hash: `v1:o${line}` })], {
        group_key: group,
        ladder_key: 'tot',
        market_key: 'total',
        side_key: 'over',
        variable: line,
        participant_id: 'pover',
      }),
      position(`ct1:tot:under:${line}:punder:ft`, [quote('v1', 1 - over, 500, { liquidity_hash: `v1:u${line}` })], {
        group_key: group,
        ladder_key: 'tot',
        market_key: 'total',
        side_key: 'under',
        variable: line,
        participant_id: 'punder',
      }),
    );
  }
  // An unquoted alternate line still belongs to the ladder.
  positions.push(
    position('ct1:tot:over:215.5:pover:ft', [], {
      group_key: 'tot:215.5',
      ladder_key: 'tot',
      market_key: 'total',
      side_key: 'over',
      variable: 215.5,
      participant_id: 'pover',
    }),
  );
  const r = computeContest(contest(positions));
  const over = r.positions.filter((p) => p.side_key === 'over');
  const under = r.positions.filter((p) => p.side_key === 'under');

  it('places the fair line where the ladder crosses 0.5, on both sides', () => {
    // 211.5 + (0.52 − 0.5)/(0.52 − 0.46) = 211.833333; under: 211.5 + (0.5 − 0.48)/(0.54 − 0.48).
    for (const p of [...over, ...under]) expect(p.consensus_line).toBe(211.833333);
  });

  it('gives each side its curve at every quoted line', () => {
    expect(over[0].distribution_prices).toEqual([
      { variable: 210.5, price: 0.58 },
      { variable: 211.5, price: 0.52 },
      { variable: 212.5, price: 0.46 },
    ]);
    expect(under[0].distribution_prices).toEqual([
      { variable: 210.5, price: 0.42 },
      { variable: 211.5, price: 0.48 },
      { variable: 212.5, price: 0.54 },
    ]);
    const alt = r.positions[r.positions.length - 1];
    expect(alt).toMatchObject({ consensus_price: null, consensus_line: 211.833333, paper_bettable: false });
  });
});

describe('computeContest: ticks across runs', () => {
  const base = () => [
    quote('a', 0.5, 5_000, { liquidity_hash: 'a:1' }),
    quote('b', 0.51, 5_000, { liquidity_hash: 'b:1' }),
  ];
  const run = (quotes: VenueQuote[], prev?: ReturnType<typeof computeContest>['snapshot']) =>
    computeContest(contest([position('ph', quotes)]), prev);

  it('first run sends every quote, an unchanged run sends nothing', () => {
    const first = run(base());
    expect(first.ticks.map((t) => t.liquidity_hash)).toEqual(['a:1', 'b:1']);
    expect(run(base(), first.snapshot).ticks).toEqual([]);
  });

  it('price changes are sent with a new buy_id', () => {
    const first = run(base());
    const q = base();
    q[0] = { ...q[0], price: 0.49, ts_event: NOW_MS - 100 };
    const second = run(q, first.snapshot);
    expect(second.ticks).toHaveLength(1);
    expect(second.ticks[0]).toMatchObject({ liquidity_hash: 'a:1', price: 0.49, buy_id: `a:1@${NOW_MS - 100}` });
  });

  it('size-only moves are sent only at USD 1,000 or less, against the previous run', () => {
    let snap = run(base()).snapshot;
    const sized = (available: number) => {
      const q = base();
      q[1] = { ...q[1], available };
      const r = run(q, snap);
      snap = r.snapshot;
      return r.ticks.map((t) => [t.liquidity_hash, t.available]);
    };
    expect(sized(4_000)).toEqual([]);
    expect(sized(800)).toEqual([['b:1', 800]]);
    expect(sized(3_000)).toEqual([]);
    expect(sized(0)).toEqual([['b:1', 0]]);
    expect(sized(2_000)).toEqual([['b:1', 2_000]]);
  });

  it('a quote that disappears is sent once with available 0', () => {
    const first = run(base());
    const second = run(base().slice(0, 1), first.snapshot);
    expect(second.ticks).toHaveLength(1);
    expect(second.ticks[0]).toMatchObject({
      liquidity_hash: 'b:1',
      position_hash: 'ph',
      price: 0.51,
      available: 0,
      actionable: false,
      buy_id: `b:1@${NOW_MS}`,
      as_of: new Date(NOW_MS).toISOString(),
    });
    expect(run(base().slice(0, 1), second.snapshot).ticks).toEqual([]);
  });

  it('a quote that becomes withheld is sent as removed', () => {
    const three = [...base(), quote('c', 0.52, 5_000, { liquidity_hash: 'c:1' })];
    const first = run(three);
    const flipped = three.map((q) => (q.partner_id === 'c' ? { ...q, venue_side_key: 'away' } : q));
    const second = run(flipped, first.snapshot);
    expect(second.ticks.map((t) => [t.liquidity_hash, t.available])).toEqual([['c:1', 0]]);
  });

  it('a stale quote is not actionable', () => {
    const r = run([quote('a', 0.5, 5_000, { as_of: '2026-03-01T11:58:00.000Z' })]);
    expect(r.ticks[0].actionable).toBe(false);
    expect(r.positions[0].paper_bettable).toBe(true);
  });

  it('marks is_stale on partner_liquidities and ticks once the clock passes stale_after_ms', () => {
    const quotes = [quote('a', 0.5, 5_000, { liquidity_hash: 'a:1', stale_after_ms: NOW_MS - 1 }), quote('b', 0.51, 5_000, { liquidity_hash: 'b:1', stale_after_ms: NOW_MS })];
    const r = run(quotes);
    expect(r.positions[0].partner_liquidities.map((l) => [l.liquidity_hash, l.is_stale, l.as_of])).toEqual([
      ['a:1', true, '2026-03-01T11:59:59.000Z'],
      ['b:1', false, '2026-03-01T11:59:59.000Z'],
    ]);
    expect(r.ticks.map((t) => [t.liquidity_hash, t.is_stale, t.actionable])).toEqual([
      ['a:1', true, false],
      ['b:1', false, true],
    ]);
  });

  it('a quote without stale_after_ms is judged by the default age policy', () => {
    const r = run([quote('a', 0.5, 5_000, { as_of: '2026-03-01T11:58:00.000Z' }), quote('b', 0.51, 5_000)]);
    expect(r.positions[0].partner_liquidities.map((l) => l.is_stale)).toEqual([true, false]);
  });

  it('a stale flip alone sends no tick (the tick-sending rule looks at price and size)', () => {
    const first = run(base());
    const q = base();
    q[0] = { ...q[0], stale_after_ms: NOW_MS - 1 };
    const second = run(q, first.snapshot);
    expect(second.ticks).toEqual([]);
    expect(second.snapshot.quotes['a:1'].is_stale).toBe(true);
  });

  it('a removal tick is confirmed now, so not stale', () => {
    const q = base();
    q[1] = { ...q[1], stale_after_ms: NOW_MS - 1 };
    const first = run(q);
    const second = run(base().slice(0, 1), first.snapshot);
    expect(second.ticks).toEqual([expect.objectContaining({ liquidity_hash: 'b:1', available: 0, is_stale: false })]);
  });

  it('refuses a snapshot of another contest', () => {
    expect(() => run(base(), { contest_id: 'other', quotes: {} })).toThrow(/other/);
  });
});
