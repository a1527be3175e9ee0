/**
 * The per-leg checks an order goes through before it is placed (spec "Orders: place" rules 6, 9-11,
 * "Errors" per-leg codes), as pure functions: preflight answers with them, the buy runs them before
 * it sends a leg to its venue. Everything they need is loaded first (src/store/order-inputs.ts);
 * nothing here does I/O.
 *
 * A real leg, in the order a venue would refuse it:
 *   the venue takes orders (orders_not_supported) → the account's connection is active and
 *   validated (venue_disabled) → the account's policy allows real money at all (practice_only:
 *   execution_limit_exceeded) → the position exists, its contest is open and the venue quotes it
 *   (insufficient_live_depth) → max_price onto the venue's grid (price_off_tick warning) and inside
 *   its band, or the offer's price inside it on an accept-by-id venue (price_out_of_band) → the
 *   stake onto the amount increment (amount_off_increment warning), whole contracts
 *   (unfillable) → the stake within the policy's limits (execution_limit_exceeded; the stake is
 *   known here, before any book) → min and max (below_min_order, above_max_order; a full fill of
 *   the resting offer waives the minimum where the venue allows it) → the fill: a market order
 *   walks the book up to max_price (nothing offered: insufficient_live_depth; best offer above max_price:
 *   above_max_price; the book within max_price holds less: insufficient_size; the stake buys no
 *   whole contract: unfillable); a limit order takes what crosses and rests the rest (would_rest),
 *   never refused for lack of liquidity → the per-venue and per-league limits again with the
 *   request's earlier legs counted, then affordability (insufficient_balance), both in LegBatch.
 * A practice leg: the best live price across real venues (fresh quotes with at least USD 1
 * available), the whole amount at that price, no depth walk (no_live_price_for_paper when none;
 * above_max_price when it is dearer than max_price), the practice book's amount rules, the wallet.
 *
 * Preflight refuses a market order the book within max_price cannot fill in full
 * (insufficient_size, with what would fill), as the buy's pre-placement checks do; an order placed
 * anyway would fill what it can and kill the rest.
 *
 * Money is exact: amounts, prices and contract counts are integer micros (money.ts), so the
 * amount a venue is sent, the contracts a stake buys and what a practice fill books are computed
 * without rounding error. Fees are the venue's published model applied to these fills (estimates:
 * a venue may round its own fee per order).
 */
import type { Partner } from './catalog.js';
import { feePacket, fillFee } from './fees.js';
import { bookWithin, microLevels, walkBook, type Fill, type Walk } from './book-walk.js';
import { divMicros, floorTo, fromMicros, maxMicros, mulMicros, parseMicros, toMicros, UNIT, type Micros } from './money.js';
import { exposureOf, limitBreach, type AccountPolicy, type LimitBreach } from './execution-limits.js';
import type { LegRejectCode, ResolvedLeg } from './orders.js';
import { fromNative, inPriceBand, roundLimitForBuyer, toNative, type PriceFormat } from './prices.js';
import type { FeeModel, FeePacket, PriceLevel } from './quotes.js';

export type { LegRejectCode };

/** Non-blocking findings of preflight. */
export type PreflightWarning = 'amount_off_increment' | 'price_off_tick' | 'insufficient_balance';

/** What the user can do about a refused (or adjusted) leg. */
export type FixHint =
  | 'raise_stake'
  | 'reduce_stake'
  | 'raise_max_price'
  | 'lower_max_price'
  | 'switch_venue'
  | 'connect_venue'
  | 'add_funds'
  | 'choose_mode'
  | 'choose_position'
  | 'retry_later'
  | 'fix_earlier_leg';

/** What the normalized contract count is priced at. */
export type PriceBasis = 'book' | 'offer' | 'max_price' | 'best_live_price';

/** Under verify_liquidity: books below this multiple of the order (USD) are read live. */
export const VERIFY_DEPTH_MULTIPLE = 3;
/** Spec rule 11: only quotes with at least USD 1 available price a practice fill. */
export const PAPER_MIN_QUOTE_USD = 1;
/** A count no book reaches: "take everything within the limit". */
const EVERYTHING: Micros = 10n ** 30n;

// ---- inputs ------------------------------------------------------------------------------------

/** One venue's quote of the position, as the liquidity feed shows it (or as read live). */
export interface QuoteView {
  partner_id: string;
  liquidity_hash: string;
  price: number;
  /** USD at the best level. */
  available: number;
  is_stale: boolean;
}

/** What the market holds for one leg: its position, the named venue's quote and book, every quote. */
export interface LegMarket {
  /** The position the leg names (or its liquidity_hash prices); null when there is no such position. */
  position_hash: string | null;
  /** The position's contest is open. */
  open: boolean;
  /** The league of the position's contest (per-league limits); null without a position. */
  league_id: string | null;
  /** The named venue's quote of the position; null when it quotes none. */
  quote: QuoteView | null;
  /** The named venue's book (cached depth), best (lowest price) first. */
  levels: PriceLevel[];
  /** The named venue's fee model; null when unknown (the venue publishes none). */
  fee: FeeModel | null;
  /** Every venue's quote of the position, with whether the venue is the internal book (paper legs). */
  quotes: (QuoteView & { internal_book: boolean })[];
}

/** The account's connection to a venue. */
export interface VenueAccess {
  status: string;
  credential_status: 'pending' | 'connected' | 'failed';
}

/** The live book read under verify_liquidity: null levels when the venue could not be read. */
export interface LiveBook {
  levels: PriceLevel[] | null;
}

export type { Fill, Walk };

export interface LegInput {
  leg: ResolvedLeg;
  /** The named venue's catalog record; null for an unknown venue. */
  venue: Partner | null;
  /** The internal (practice) book's catalog record, for practice legs. */
  practice: Partner | null;
  /** The account's connection to the named venue; null when it has none. */
  access: VenueAccess | null;
  market: LegMarket;
  /** verify_liquidity was asked for (the result then says per venue whether it was read live). */
  verify: boolean;
  /** The live book, when verify_liquidity read it (see needsLiveBook). */
  live: LiveBook | null;
  /** The account's execution-limit policy and the open exposure it counts (real-money legs only). */
  policy: AccountPolicy;
}

/** Reads a venue's live book (under verify_liquidity); null when this venue cannot be read live. */
export interface LiveBookReader {
  read(partnerId: string, positionHash: string): Promise<PriceLevel[] | null>;
}

/**
 * Money a venue (or the practice wallet) is known to hold for the account: the expected balance,
 * and whether it is synced (a fresh venue snapshot, or the practice ledger). No entry for a venue
 * means no balance figure exists, and the check fails open (spec rule 6).
 */
export interface Funds {
  available: Micros;
  synced: boolean;
}

// ---- outputs -----------------------------------------------------------------------------------

export interface NormalizedOrder {
  /** The limit on the venue's grid, 0-1 (never above the caller's max_price). */
  max_price: number;
  /** USD (ATLAS on a practice leg) after the amount increment; a share count valued at max_price. */
  amount: number;
  /** Contracts the order buys (a market order: what the book fills; a limit: what it targets). */
  contracts: number;
  price_basis: PriceBasis;
  price_format: PriceFormat;
  /** max_price in the venue's unit (cents, american odds, probability), as it would be submitted. */
  native_max_price: number;
}

export interface PreflightVenue {
  partner_id: string;
  expected_price: number | null;
  allocated_amount: number;
  /** All-in prices at expected_price; taker_fee/maker_fee for this order's amount. null: fees unknown. */
  fee_packet: FeePacket | null;
  /** Present under verify_liquidity: whether the live book was read (fresh, deep venues skip it). */
  verified?: boolean;
  /** USD the live book offers at or below max_price (null when not read live). */
  live_available?: number | null;
  live_price?: number | null;
}

/** The spec's Preflight result, plus the currency the leg books in. */
export interface PreflightResult {
  index: number;
  requested_partner_id: string;
  accepted: boolean;
  rejected_code: LegRejectCode | null;
  rejected_reason: string | null;
  message_user: string;
  fix: FixHint | null;
  warnings: PreflightWarning[];
  currency: 'USD' | 'ATLAS' | null;
  normalized: NormalizedOrder | null;
  would_rest: boolean;
  expected_fill_price: number | null;
  total_allocated: number;
  unfilled_amount: number;
  total_taker_fee: number | null;
  total_maker_fee: number | null;
  total_cost_taker: number | null;
  venues: PreflightVenue[];
}

/**
 * The order a passing leg would send, in exact units, for the buy to place and book: the venue's
 * limit and stake on its grid, what crosses now and what rests.
 */
export interface LegPlan {
  partner_id: string;
  currency: 'USD' | 'ATLAS';
  order_type: ResolvedLeg['order_type'];
  /** Limit on the grid, 0-1 micros; on a practice leg the best live price it fills at. */
  limit: Micros;
  /** Stake after the increment (amount legs) or shares × limit (share legs). */
  amount: Micros;
  /** Contracts sent: the walk's fill (market), the target (limit), amount ÷ price (practice). */
  contracts: Micros;
  /** What fills at once, price by price. */
  fills: Fill[];
  filled: Micros;
  /** Contracts a limit order would rest with (0 otherwise). */
  resting: Micros;
  /** Funds the leg takes: notional (resting part at its limit) plus the taker fee. */
  commitment: Micros;
}

/** A leg's checks before affordability (LegBatch applies that across the request). */
export interface LegEvaluation {
  result: PreflightResult;
  /** Set when the leg passed its own checks. */
  plan: LegPlan | null;
  /** Whose funds pay: the venue's partner_id, or the practice book's. */
  funds_key: string | null;
  /** The league a passing real leg's stake counts toward (per-league limits across the request). */
  league_id: string | null;
}

/**
 * Whether verify_liquidity reads this venue's live book: its cached quote is stale, or its cached
 * book holds less than about three times the order (USD); a fresh, deep venue skips the check.
 */
export function needsLiveBook(leg: ResolvedLeg, market: LegMarket): boolean {
  if (leg.mode !== 'real' || market.quote === null || market.position_hash === null) return false;
  if (market.quote.is_stale) return true;
  const orderUsd = leg.amount ?? (leg.shares ?? 0) * leg.max_price;
  const depth = market.levels.reduce((s, l) => s + Math.max(0, l.available), 0) || market.quote.available;
  return depth < VERIFY_DEPTH_MULTIPLE * orderUsd;
}

// ---- text ---------------------------------------------------------------------------------------

const usd = (m: Micros, currency: 'USD' | 'ATLAS' = 'USD') => (currency === 'USD' ? `$${fromMicros(m).toFixed(2)}` : `${fromMicros(m).toFixed(2)} ATLAS`);
const prob = (p: number) => String(Math.round(p * 1e6) / 1e6);
const contractsText = (m: Micros) => {
  const n = fromMicros(m);
  return `${n} contract${n === 1 ? '' : 's'}`;
};

// ---- evaluation ---------------------------------------------------------------------------------

interface Refusal {
  code: LegRejectCode | null;
  reason: string;
  message: string;
  fix: FixHint;
}

/** A result with nothing evaluated yet (numbers zero, no venue). */
function blankResult(leg: ResolvedLeg, currency: PreflightResult['currency']): PreflightResult {
  return {
    index: leg.index,
    requested_partner_id: leg.partner_id,
    accepted: false,
    rejected_code: null,
    rejected_reason: null,
    message_user: '',
    fix: null,
    warnings: [],
    currency,
    normalized: null,
    would_rest: false,
    expected_fill_price: null,
    total_allocated: 0,
    // Nothing fills: the whole order (a share count valued at max_price).
    unfilled_amount: leg.amount ?? fromMicros(mulMicros(toMicros(leg.shares ?? 0, 'floor'), toMicros(leg.max_price, 'floor'), 'half')),
    total_taker_fee: null,
    total_maker_fee: null,
    total_cost_taker: null,
    venues: [],
  };
}

const refuse = (result: PreflightResult, r: Refusal): LegEvaluation => ({
  result: { ...result, accepted: false, rejected_code: r.code, rejected_reason: r.reason, message_user: r.message, fix: r.fix },
  plan: null,
  funds_key: null,
  league_id: null,
});

/**
 * The refusal of a leg that breaks the account's execution-limit policy (spec rule 9). `venue`: the
 * venue's name; `withRequest`: what counted includes earlier legs of this request (LegBatch).
 */
export function limitRefusal(b: LimitBreach, venue: string, withRequest = false): Refusal {
  const l = b.limit;
  const code = 'execution_limit_exceeded';
  const stake = b.stake ?? 0n;
  switch (l.type) {
    case 'practice_only':
      return { code, reason: 'the account\'s policy is practice_only: no real-money orders', message: 'Your trading limits allow practice orders only. Send this order in practice mode.', fix: 'choose_mode' };
    case 'max_stake_per_order':
      return { code, reason: `stake ${fromMicros(stake)} is above max_stake_per_order ${fromMicros(l.amount)}`, message: `Your trading limits allow at most ${usd(l.amount)} per order; this one stakes ${usd(stake)}. Reduce the stake.`, fix: 'reduce_stake' };
    case 'max_stake_per_venue':
    case 'max_stake_per_league': {
      const where = l.type === 'max_stake_per_venue' ? `on ${l.partner_id}` : `in league ${l.league_id}`;
      const whereUser = l.type === 'max_stake_per_venue' ? `on ${venue}` : `in ${l.league_id}`;
      const room = maxMicros(0n, l.amount - b.counted);
      const open = withRequest ? 'already open or staked by earlier orders of this request' : 'already open';
      return {
        code,
        reason: `stake ${fromMicros(stake)} plus ${fromMicros(b.counted)} ${open} ${where} is above ${l.type} ${fromMicros(l.amount)} (${fromMicros(room)} left)`,
        message: `Your trading limits allow at most ${usd(l.amount)} in open orders ${whereUser}; ${usd(b.counted)} is ${open}, so this order can stake at most ${usd(room)}.`,
        fix: 'reduce_stake',
      };
    }
  }
}

/** The leg that never ran because an earlier one halted the request (spec rule 3). */
export function haltedResult(leg: ResolvedLeg, haltedAt: number): PreflightResult {
  return {
    ...blankResult(leg, leg.mode === 'paper' ? 'ATLAS' : leg.mode === 'real' ? 'USD' : null),
    rejected_code: 'halted_upstream',
    rejected_reason: `not checked: leg ${haltedAt} failed and on_leg_failure is halt, so the request stops there`,
    message_user: 'Not checked: an earlier order in this request failed, and the request stops at the first failure.',
    fix: 'fix_earlier_leg',
  };
}

/** Checks one leg on its own (affordability across the request is LegBatch's). */
export function evaluateLeg(input: LegInput): LegEvaluation {
  const { leg } = input;
  if (leg.unplannable !== null) {
    return refuse(blankResult(leg, null), { code: null, reason: leg.unplannable, message: 'Choose whether this is a practice or a real-money order (mode paper or real).', fix: 'choose_mode' });
  }
  return leg.mode === 'paper' ? evaluatePaper(input) : evaluateReal(input);
}

/** The stake after the amount increment (or a share count on the grid), with its warnings and refusals. */
interface Sized {
  /** USD of the order: the floored amount, or shares valued at the limit. */
  amount: Micros;
  /** The amount as requested (exact when it had at most six decimals). */
  requested: Micros;
  /** Contracts asked for (share legs), on the venue's grid. */
  shares: Micros | null;
  warnings: PreflightWarning[];
}

/** `price` values a share count (the limit for the venue's bounds, rounded up; a practice fill's price, booked to the nearest micro). */
function sizeLeg(leg: ResolvedLeg, cfg: Partner['order_config'], price: Micros, whole: boolean, valueShares: 'ceil' | 'half'): Sized | Refusal {
  if (leg.amount !== null) {
    const parsed = parseMicros(String(leg.amount), 'floor');
    let amount = parsed.micros;
    const warnings: PreflightWarning[] = [];
    if (cfg.amount_increment !== null && cfg.amount_increment > 0) {
      const step = toMicros(cfg.amount_increment, 'half');
      const floored = step > 0n ? floorTo(amount, step) : amount;
      if (floored !== amount || !parsed.exact) warnings.push('amount_off_increment');
      if (floored <= 0n) {
        return { code: 'below_min_order', reason: `amount ${leg.amount} is below one ${cfg.amount_increment} increment`, message: `The stake is below the smallest amount this venue takes (${usd(step)}).`, fix: 'raise_stake' };
      }
      amount = floored;
    } else if (!parsed.exact) warnings.push('amount_off_increment');
    return { amount, requested: parsed.micros, shares: null, warnings };
  }
  let shares = toMicros(leg.shares!, 'floor');
  if (whole) shares = floorTo(shares, UNIT);
  if (shares <= 0n) {
    return { code: 'unfillable', reason: `${leg.shares} shares floor to zero whole contracts`, message: 'This venue trades whole contracts only, and the order is for less than one.', fix: 'raise_stake' };
  }
  const amount = mulMicros(shares, price, valueShares);
  return { amount, requested: amount, shares, warnings: [] };
}

/** The venue's min/max in USD (spec rule 10); `fullFill` waives the minimum where the venue allows taking the whole offer. */
function boundsRefusal(cfg: Partner['order_config'], amount: Micros, fullFill: () => boolean, currency: 'USD' | 'ATLAS'): Refusal | null {
  if (cfg.max_order_amount !== null && amount > toMicros(cfg.max_order_amount, 'floor')) {
    const max = toMicros(cfg.max_order_amount, 'floor');
    return { code: 'above_max_order', reason: `order of ${fromMicros(amount)} is above the venue maximum ${cfg.max_order_amount}`, message: `The stake is above this venue's maximum of ${usd(max, currency)}.`, fix: 'reduce_stake' };
  }
  const min = toMicros(cfg.min_order_amount, 'ceil');
  if (amount < min && !fullFill()) {
    return { code: 'below_min_order', reason: `order of ${fromMicros(amount)} is below the venue minimum ${cfg.min_order_amount}`, message: `The stake is below this venue's minimum of ${usd(min, currency)}.`, fix: 'raise_stake' };
  }
  return null;
}

function evaluateReal(input: LegInput): LegEvaluation {
  const { leg, venue, access, market } = input;
  const base = blankResult(leg, 'USD');
  if (venue === null) {
    return refuse(base, { code: null, reason: `no venue ${JSON.stringify(leg.partner_id)} in the partner catalog`, message: 'This venue is not one we know. Choose a venue from the partner list.', fix: 'switch_venue' });
  }
  const cfg = venue.order_config;
  const name = venue.name;
  if (!venue.orders_allowed || !cfg.orders_allowed) {
    return refuse(base, { code: 'orders_not_supported', reason: `${venue.partner_id} does not accept orders (quotes only)`, message: `${name} shows prices only and does not take orders. Choose another venue.`, fix: 'switch_venue' });
  }
  if (venue.internal_book) {
    return refuse(base, { code: null, reason: `${venue.partner_id} is the practice book: send mode paper`, message: 'The practice book takes practice orders only. Send this order in practice mode.', fix: 'choose_mode' });
  }
  if (!cfg.supported_order_types.includes(leg.order_type)) {
    // The request-level check (400 unsupported_order_type) runs first; kept so the checks stand alone.
    return refuse(base, { code: null, reason: `${leg.order_type} orders are not supported on ${venue.partner_id}`, message: `${name} does not take ${leg.order_type} orders.`, fix: 'switch_venue' });
  }
  if (venue.status !== 'active') {
    return refuse(base, { code: 'venue_disabled', reason: `${venue.partner_id} is ${venue.status}`, message: `${name} is paused and is not taking orders right now.`, fix: 'switch_venue' });
  }
  if (access === null || access.status !== 'active' || access.credential_status !== 'connected') {
    const why = access === null ? 'the account has no connection to it' : access.status !== 'active' ? `the connection is ${access.status}` : `its credentials are ${access.credential_status}`;
    return refuse(base, { code: 'venue_disabled', reason: `${venue.partner_id}: ${why}`, message: `Your ${name} account is not connected. Connect it on the connect page to trade there.`, fix: 'connect_venue' });
  }
  // Spec rule 9's other control: the policy. practice_only needs no stake; the stake limits follow sizing.
  const counted = exposureOf(input.policy, venue.partner_id, market.league_id);
  const barred = limitBreach(input.policy.limits, { mode: 'real', partner_id: venue.partner_id, league_id: market.league_id, stake: null }, counted);
  if (barred) return refuse(base, limitRefusal(barred, name));
  if (market.position_hash === null || !market.open) {
    const reason = market.position_hash === null ? 'no such position' : 'the contest is closed';
    return refuse(base, { code: 'insufficient_live_depth', reason, message: 'This market is not open for orders.', fix: 'choose_position' });
  }
  const quote = market.quote;
  if (quote === null) {
    return refuse(base, { code: 'insufficient_live_depth', reason: `${venue.partner_id} does not quote this position`, message: `${name} has no market for this position. Try another venue.`, fix: 'switch_venue' });
  }

  // The venue's grid: the limit rounds in the buyer's favour, never above max_price.
  const format = cfg.price_format;
  const warnings: PreflightWarning[] = [];
  const native = toNative(format, leg.max_price);
  // A probability within a hair of 0 has no finite american price: no venue takes it.
  const gridLimit = Number.isFinite(native) ? roundLimitForBuyer(format, native, cfg.price_tick) : 0;
  if (cfg.price_submitted && Math.abs(gridLimit - native) > 1e-9 * Math.max(1, Math.abs(native))) warnings.push('price_off_tick');
  // A grid limit at or below zero in cents or probability means no price at all (american odds are signed).
  const limitP = (format === 'american' ? Math.abs(gridLimit) >= 100 : gridLimit > 0) ? fromNative(format, gridLimit) : 0;
  const limit = toMicros(Math.min(limitP, leg.max_price), 'floor');
  if (limit <= 0n || (cfg.price_submitted && !inPriceBand(cfg, gridLimit))) {
    const belowBand = limit <= 0n || (cfg.min_price !== null && limitP < fromNative(format, cfg.min_price));
    return refuse(
      { ...base, warnings },
      {
        code: 'price_out_of_band',
        reason: `limit ${gridLimit} (${format}) is outside the venue band [${cfg.min_price}, ${cfg.max_price}]`,
        message: `${name} does not accept this price. Use a max price inside its range.`,
        fix: belowBand ? 'raise_max_price' : 'lower_max_price',
      },
    );
  }

  const live = input.live !== null && input.live.levels !== null ? input.live.levels : null;
  const bookLevels = live ?? (market.levels.length > 0 ? market.levels : quote.available > 0 ? [{ price: quote.price, available: quote.available }] : []);
  const hasBook = microLevels(bookLevels).length > 0;
  if (!cfg.price_submitted && hasBook) {
    // Accept-by-id: the offer's own price is taken, and the band applies to it.
    const offer = microLevels(bookLevels)[0]!;
    const offerP = fromMicros(offer.price);
    if (!(offerP > 0 && offerP < 1) || !inPriceBand(cfg, toNative(format, offerP))) {
      return refuse({ ...base, warnings }, { code: 'price_out_of_band', reason: `offer price ${offerP} is outside the venue band [${cfg.min_price}, ${cfg.max_price}]`, message: `${name}'s current offer is outside the prices it accepts. Try another venue.`, fix: 'switch_venue' });
    }
  }

  const whole = cfg.whole_contracts;
  const sized = sizeLeg(leg, cfg, limit, whole, 'ceil');
  if ('code' in sized) return refuse({ ...base, warnings }, sized);
  warnings.push(...sized.warnings);
  const normalized = (contracts: Micros, basis: PriceBasis): NormalizedOrder => ({
    max_price: fromMicros(limit),
    amount: fromMicros(sized.amount),
    contracts: fromMicros(contracts),
    price_basis: basis,
    price_format: format,
    native_max_price: gridLimit,
  });
  const fullFill = () => {
    if (!cfg.full_fill_always_allowed || leg.order_type !== 'market') return false;
    const all = walkBook(bookLevels, limit, whole, { contracts: EVERYTHING });
    return all.contracts > 0n && sized.amount >= all.notional;
  };
  const overLimit = limitBreach(input.policy.limits, { mode: 'real', partner_id: venue.partner_id, league_id: market.league_id, stake: sized.amount }, counted);
  if (overLimit) return refuse({ ...base, warnings, normalized: normalized(sized.shares ?? 0n, 'max_price') }, limitRefusal(overLimit, name));
  const bounds = boundsRefusal(cfg, sized.amount, fullFill, 'USD');
  if (bounds) return refuse({ ...base, warnings, normalized: normalized(sized.shares ?? 0n, 'max_price') }, bounds);

  const want = sized.shares !== null ? { contracts: sized.shares } : { usd: sized.amount };
  const movedAway = (r: Refusal): Refusal =>
    live === null ? r : { ...r, code: 'insufficient_live_depth', reason: `the live book moved away (verify_liquidity): ${r.reason}` };
  let walk: Walk;
  let resting = 0n;
  let refusal: Refusal | null = null;
  if (leg.order_type === 'market') {
    if (!hasBook) {
      const empty: PreflightVenue = { partner_id: venue.partner_id, expected_price: null, allocated_amount: 0, fee_packet: null, ...(input.verify ? verification(input.live, bookLevels, fromMicros(limit)) : {}) };
      return refuse(
        { ...base, warnings, normalized: normalized(0n, 'book'), venues: [empty] },
        movedAway({ code: 'insufficient_live_depth', reason: `nothing offered on ${venue.partner_id}`, message: `Nothing is offered on this position at ${name} right now.`, fix: 'switch_venue' }),
      );
    }
    walk = walkBook(bookLevels, limit, whole, want);
    const best = microLevels(bookLevels)[0]!.price;
    if (!walk.eligible) {
      refusal = movedAway({ code: 'above_max_price', reason: `best offer ${fromMicros(best)} is above the limit ${fromMicros(limit)}`, message: `The best price at ${name} is ${prob(fromMicros(best))}, above your max price. Raise your max price to trade.`, fix: 'raise_max_price' });
    } else if (walk.contracts <= 0n) {
      refusal = { code: 'unfillable', reason: `the stake buys no whole contract at ${fromMicros(best)}`, message: 'This venue trades whole contracts only, and the stake does not buy one at this price. Raise the stake.', fix: 'raise_stake' };
    } else if (!walk.satisfied) {
      refusal = movedAway({
        code: 'insufficient_size',
        reason: `only ${fromMicros(walk.notional)} USD is offered at or below ${fromMicros(limit)}`,
        message: `Only ${usd(walk.notional)} is offered on ${name} up to your max price. Reduce the stake to at most that.`,
        fix: 'reduce_stake',
      });
    }
  } else {
    const target = sized.shares ?? (whole ? floorTo(divMicros(sized.amount, limit, 'floor'), UNIT) : divMicros(sized.amount, limit, 'floor'));
    if (target <= 0n) {
      return refuse({ ...base, warnings, normalized: normalized(0n, 'max_price') }, { code: 'unfillable', reason: `the stake buys no whole contract at ${fromMicros(limit)}`, message: 'This venue trades whole contracts only, and the stake does not buy one at your max price. Raise the stake.', fix: 'raise_stake' });
    }
    walk = walkBook(bookLevels, limit, whole, { contracts: target });
    resting = target - walk.contracts;
  }

  // The order's totals: what fills now, what rests at the limit, their fees for this amount.
  const restFill: Fill[] = resting > 0n ? [{ price: limit, contracts: resting, notional: mulMicros(resting, limit, 'half') }] : [];
  const all = [...walk.fills, ...restFill];
  const contracts = walk.contracts + resting;
  const notional = all.reduce((s, f) => s + f.notional, 0n);
  const fee = market.fee;
  const feeOf = (role: 'taker' | 'maker') => (fee === null || fee.kind === 'unknown' ? null : toMicros(all.reduce((s, f) => s + fillFee(fee, role, fromMicros(f.price), fromMicros(f.contracts)), 0), 'ceil'));
  const taker = feeOf('taker');
  const maker = feeOf('maker');
  const avg = contracts > 0n ? fromMicros(divMicros(notional, contracts, 'half')) : null;
  const unfilled = sized.shares !== null ? mulMicros(maxMicros(0n, sized.shares - walk.contracts), limit, 'half') : maxMicros(0n, sized.requested - walk.notional);
  const packet = fee === null ? null : feePacket(avg ?? quote.price, fee);
  const venueEntry: PreflightVenue = {
    partner_id: venue.partner_id,
    expected_price: avg,
    allocated_amount: fromMicros(walk.notional),
    fee_packet: packet === null ? null : { taker_price: packet.taker_price, maker_price: packet.maker_price, taker_fee: taker === null ? 0 : fromMicros(taker), maker_fee: maker === null ? 0 : fromMicros(maker) },
    ...(input.verify ? verification(input.live, bookLevels, fromMicros(limit)) : {}),
  };
  const result: PreflightResult = {
    ...base,
    warnings,
    normalized: normalized(contracts, leg.order_type === 'limit' ? 'max_price' : cfg.price_submitted ? 'book' : 'offer'),
    would_rest: resting > 0n,
    expected_fill_price: avg,
    total_allocated: fromMicros(walk.notional),
    unfilled_amount: fromMicros(unfilled),
    total_taker_fee: taker === null ? null : fromMicros(taker),
    total_maker_fee: maker === null ? null : fromMicros(maker),
    total_cost_taker: taker === null ? null : fromMicros(notional + taker),
    venues: [venueEntry],
  };
  if (refusal) return refuse(result, refusal);
  const placing = resting > 0n ? `${contractsText(walk.contracts)} now and rest ${contractsText(resting)} at ${prob(fromMicros(limit))}` : `${contractsText(contracts)} at an average price of ${prob(avg!)}`;
  return {
    result: { ...result, accepted: true, message_user: `Ready: would buy ${placing} on ${name}, ${usd(notional + (taker ?? 0n))} with fees.` },
    plan: {
      partner_id: venue.partner_id,
      currency: 'USD',
      order_type: leg.order_type,
      limit,
      amount: sized.amount,
      contracts,
      fills: walk.fills,
      filled: walk.contracts,
      resting,
      commitment: notional + (taker ?? 0n),
    },
    funds_key: venue.partner_id,
    league_id: market.league_id,
  };
}

/** The verify_liquidity fields of a venue entry. */
function verification(live: LiveBook | null, levels: readonly PriceLevel[], limit: number): Pick<PreflightVenue, 'verified' | 'live_available' | 'live_price'> {
  if (live === null || live.levels === null) return { verified: false, live_available: null, live_price: null };
  const w = bookWithin(levels, limit);
  return { verified: true, live_available: w.available, live_price: w.best };
}

/**
 * The quote a practice leg fills at (spec rule 11), the one rule the buy and preflight share: among
 * quotes of venues that are not an internal book, not stale, priced strictly between 0 and 1, with
 * at least USD 1 available, the lowest price a buyer pays; ties go to the larger size, then the
 * venue id, so the choice never depends on the order quotes were stored in. null when none qualifies.
 */
export function bestPaperQuote<Q extends { partner_id: string; price: number; available: number; is_stale: boolean }>(quotes: readonly Q[], isInternalBook: (q: Q) => boolean): Q | null {
  let best: Q | null = null;
  for (const q of quotes) {
    if (isInternalBook(q) || q.is_stale || !(q.price > 0 && q.price < 1) || !(q.available >= PAPER_MIN_QUOTE_USD)) continue;
    if (best === null || q.price < best.price || (q.price === best.price && (q.available > best.available || (q.available === best.available && q.partner_id < best.partner_id)))) best = q;
  }
  return best;
}

/** The best live price a practice leg fills at (bestPaperQuote's price). */
export const bestPaperPrice = (quotes: LegMarket['quotes']): number | null => bestPaperQuote(quotes, (q) => q.internal_book)?.price ?? null;

function evaluatePaper(input: LegInput): LegEvaluation {
  const { leg, practice, market } = input;
  const base = blankResult(leg, 'ATLAS');
  if (practice === null) {
    return refuse(base, { code: null, reason: 'no internal (practice) book in the partner catalog', message: 'Practice orders are not available right now.', fix: 'retry_later' });
  }
  const cfg = practice.order_config;
  const best = market.position_hash !== null && market.open ? bestPaperPrice(market.quotes) : null;
  if (best === null) {
    const reason = market.position_hash === null ? 'no such position' : !market.open ? 'the contest is closed' : 'no real venue quotes this position with at least USD 1 available';
    return refuse(base, { code: 'no_live_price_for_paper', reason, message: 'No venue is pricing this position right now, so a practice order cannot be filled.', fix: 'retry_later' });
  }
  const price = toMicros(best, 'half');
  const limit = toMicros(leg.max_price, 'floor');
  if (price > limit) {
    return refuse(base, { code: 'above_max_price', reason: `best live price ${best} is above the limit ${leg.max_price}`, message: `The best live price is ${prob(best)}, above your max price. Raise your max price to trade.`, fix: 'raise_max_price' });
  }
  // Shares are valued at the fill price here: the practice book fills the whole order at it.
  const sized = sizeLeg(leg, cfg, price, false, 'half');
  if ('code' in sized) return refuse(base, sized);
  const normalized = (contracts: Micros): NormalizedOrder => ({
    max_price: leg.max_price,
    amount: fromMicros(sized.amount),
    contracts: fromMicros(contracts),
    price_basis: 'best_live_price',
    price_format: 'probability',
    native_max_price: leg.max_price,
  });
  const amount = sized.amount;
  const contracts = sized.shares ?? divMicros(amount, price, 'floor');
  const bounds = boundsRefusal(cfg, amount, () => false, 'ATLAS');
  if (bounds) return refuse({ ...base, warnings: sized.warnings, normalized: normalized(contracts) }, bounds);
  const result: PreflightResult = {
    ...base,
    warnings: sized.warnings,
    normalized: normalized(contracts),
    expected_fill_price: best,
    total_allocated: fromMicros(amount),
    unfilled_amount: fromMicros(maxMicros(0n, sized.requested - amount)),
    total_taker_fee: 0,
    total_maker_fee: 0,
    total_cost_taker: fromMicros(amount),
    venues: [
      {
        partner_id: practice.partner_id,
        expected_price: best,
        allocated_amount: fromMicros(amount),
        fee_packet: { taker_price: best, maker_price: best, taker_fee: 0, maker_fee: 0 },
        // The practice book reads no venue's book: it prices off the live quotes.
        ...(input.verify ? { verified: false, live_available: null, live_price: null } : {}),
      },
    ],
    accepted: true,
    message_user: `Ready: would buy ${contractsText(contracts)} in practice at ${prob(best)}, ${usd(amount, 'ATLAS')}.`,
  };
  return {
    result,
    plan: { partner_id: practice.partner_id, currency: 'ATLAS', order_type: 'market', limit: price, amount, contracts, fills: [{ price, contracts, notional: amount }], filled: contracts, resting: 0n, commitment: amount },
    funds_key: practice.partner_id,
    league_id: null,
  };
}

// ---- the request: affordability and halt ----------------------------------------------------------

/**
 * A request's legs in order: the per-venue and per-league limits with the request's earlier
 * passing legs counted on top of the account's open exposure (rule 9; each leg alone was checked
 * in evaluateLeg), affordability summed per venue over the legs that would place (spec rule 6),
 * and halt (rule 3). A synced balance that the legs so far exceed refuses the leg
 * (insufficient_balance); a stale one only warns (the check fails open without a synced balance);
 * no balance figure at all passes silently.
 *
 * Halt: the first leg that fails stops the request (halted_at_index); the legs after it are
 * halted_upstream without being checked, unless check_all_first asked for every leg's checks up
 * front, when each keeps its own result.
 */
export class LegBatch {
  private readonly spent = new Map<string, Micros>();
  /** Real-money stakes of the legs that passed so far, per venue and per league (the limits count them). */
  private readonly staked = { venues: new Map<string, Micros>(), leagues: new Map<string, Micros>() };
  private haltedAt: number | null = null;

  constructor(
    private readonly funds: ReadonlyMap<string, Funds>,
    private readonly opts: { halt: boolean; checkAllFirst: boolean },
    private readonly policy: AccountPolicy,
  ) {}

  get haltedAtIndex(): number | null {
    return this.haltedAt;
  }

  /** Whether the next leg is skipped (halted_upstream) rather than checked. */
  get skipping(): boolean {
    return this.haltedAt !== null && !this.opts.checkAllFirst;
  }

  /** The final result of a checked leg, with affordability applied. */
  settle(ev: LegEvaluation): { result: PreflightResult; plan: LegPlan | null } {
    let { result, plan } = ev;
    if (plan !== null && plan.currency === 'USD') {
      const open = exposureOf(this.policy, plan.partner_id, ev.league_id);
      const counted = { venue: open.venue + (this.staked.venues.get(plan.partner_id) ?? 0n), league: open.league + (ev.league_id === null ? 0n : (this.staked.leagues.get(ev.league_id) ?? 0n)) };
      const breach = limitBreach(this.policy.limits, { mode: 'real', partner_id: plan.partner_id, league_id: ev.league_id, stake: plan.amount }, counted);
      if (breach) {
        const r = limitRefusal(breach, plan.partner_id, true);
        result = { ...result, accepted: false, rejected_code: r.code, rejected_reason: r.reason, message_user: r.message, fix: r.fix };
        plan = null;
      }
    }
    if (plan !== null && ev.funds_key !== null) {
      const funds = this.funds.get(ev.funds_key);
      const before = this.spent.get(ev.funds_key) ?? 0n;
      const after = before + plan.commitment;
      if (funds !== undefined && after > funds.available) {
        const currency = plan.currency;
        const have = maxMicros(0n, funds.available - before);
        const message = `Your ${currency === 'ATLAS' ? 'practice wallet' : 'balance on this venue'} (${usd(have, currency)} left for this request) does not cover this order (${usd(plan.commitment, currency)}).`;
        if (funds.synced) {
          result = { ...result, accepted: false, rejected_code: 'insufficient_balance', rejected_reason: `cost ${fromMicros(plan.commitment)} exceeds the ${fromMicros(have)} left of the expected balance ${fromMicros(funds.available)}`, message_user: `${message} Add funds or reduce the stake.`, fix: 'add_funds' };
          plan = null;
        } else {
          result = { ...result, warnings: [...result.warnings, 'insufficient_balance'], message_user: `${result.message_user} Your last known balance (not recently synced) looks too low for it.` };
        }
      }
      if (plan !== null) this.spent.set(ev.funds_key, after);
    }
    if (plan !== null && plan.currency === 'USD') {
      this.staked.venues.set(plan.partner_id, (this.staked.venues.get(plan.partner_id) ?? 0n) + plan.amount);
      if (ev.league_id !== null) this.staked.leagues.set(ev.league_id, (this.staked.leagues.get(ev.league_id) ?? 0n) + plan.amount);
    }
    if (!result.accepted) this.recordFailure(result.index);
    return { result, plan };
  }

  /**
   * A leg failed after its checks (the buy: the venue refused or failed it): under halt, the
   * request stops here. The funds it was counted for stay counted (a failed placement may still
   * hold some of them until the venue's next snapshot).
   */
  recordFailure(index: number): void {
    if (this.opts.halt && this.haltedAt === null) this.haltedAt = index;
  }
}
