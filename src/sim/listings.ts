/**
 * A venue's listings: a position a venue lists (its instrument id in the venue's own form, the side
 * it lists the participant on, its book), made when the venue starts listing it and dropped when
 * the contest is settled, so a market that keeps opening and settling contests does not grow.
 */
import { liquidityHash } from '../domain/hashes.js';
import { currentTime, type MarketCore } from './core.js';
import { fairNow } from './pricing.js';
import { hashSeed } from './rng.js';
import type { ContestRt, Listing, PosRt, VenueRt } from './runtime.js';

const OPPOSITE: Readonly<Record<string, string>> = { home: 'away', away: 'home', over: 'under', under: 'over', yes: 'no', no: 'yes' };

/** A listing made only to carry a late print on a contest the venue no longer lists (not kept). */
export function detachedListing(core: MarketCore, v: VenueRt, pr: PosRt): Listing {
  const l = createListing(core, v, pr, currentTime(core));
  l.closed = true;
  l.levels = [];
  delist(v, pr.c);
  return l;
}

export function createListing(core: MarketCore, v: VenueRt, pr: PosRt, now: number): Listing {
  const seq = ++v.instrumentSeq;
  let instrumentId: string;
  switch (v.pers.wire) {
    case 'exchange':
      instrumentId = `SX-${String(seq).padStart(6, '0')}`;
      break;
    case 'book01':
      instrumentId = `${(hashSeed(core.seed, pr.pos.position_hash) % 900_000_000) + 100_000_000}${String(seq).padStart(5, '0')}`;
      break;
    case 'sportsbook':
      instrumentId = `SB${100_000 + seq}`;
      break;
    case 'p2p':
      instrumentId = `line-${seq}`;
      break;
    default:
      instrumentId = `q${seq}`;
  }
  const flip = v.flipped.has(pr.c.p.contest_id) && (pr.pos.market_key === 'moneyline' || pr.pos.market_key === 'spread');
  const side = flip ? (OPPOSITE[pr.pos.side_key] ?? pr.pos.side_key) : pr.pos.side_key;
  const fair = fairNow(pr, now);
  const l: Listing = {
    v,
    pr,
    inst: {
      instrument_id: instrumentId,
      position_hash: pr.pos.position_hash,
      contest_id: pr.pos.contest_id,
      liquidity_hash: liquidityHash(v.id, instrumentId),
      venue_side_key: side,
    },
    levels: [],
    ts_event: now,
    lag: fair,
    lagTs: now,
    outlierOff: 0,
    outlierUntil: 0,
    arbOff: 0,
    arbUntil: 0,
    dueAt: Infinity,
    pinned: false,
    closed: false,
    resting: [],
    tape: [],
    tapeHeldUntil: 0,
  };
  v.listings.push(l);
  v.byPosition.set(pr.pos.position_hash, l);
  v.byInstrument.set(instrumentId, l);
  pr.listings.push(l);
  return l;
}


/**
 * A venue stops listing a settled contest (its emptied books went out first): the venue's maps
 * drop its listings, so a market that keeps opening and settling contests does not grow.
 */
export function delist(v: VenueRt, c: ContestRt): void {
  if (!v.listings.some((l) => l.pr.c === c)) return;
  v.listings = v.listings.filter((l) => l.pr.c !== c);
  for (const pr of c.positions) {
    const l = v.byPosition.get(pr.pos.position_hash);
    if (!l) continue;
    v.byPosition.delete(pr.pos.position_hash);
    v.byInstrument.delete(l.inst.instrument_id);
    v.due.delete(l);
    v.groupBias.delete(pr.pos.group_key);
    pr.listings = pr.listings.filter((x) => x !== l);
  }
  v.flipped.delete(c.p.contest_id);
}
