/**
 * Kalshi series / events / markets → the service's catalog (the shapes `seedCatalog` upserts), and
 * the listing table the adapter joins every book, trade and order through.
 *
 * Mapping (venue-native: the cross-venue matcher may later point a listing at another contest's
 * positions by passing its own `positionOf`):
 *   series  → league       `kalshi-<SERIES>`, named by the series title; participant_type null
 *   event   → contest      `kalshi-<EVENT>`, type `event`, titled by the event (else the market)
 *   market  → participant  `kalshi-<TICKER>` (the market's subject: its yes_sub_title) and two
 *                          positions on the market type `binary` (side keys yes/no): buying YES and
 *                          buying NO of that market. Both form one group (exactly one of them pays).
 * The series ticker is the event's `series_ticker`, else the event ticker up to its first '-'
 * (Kalshi's naming: KXNFLGAME → KXNFLGAME-25DEC27BALGB → KXNFLGAME-25DEC27BALGB-GB).
 *
 * starts_at is when the outcome is known: occurrence_datetime, else expected_expiration_time, else
 * close_time (Kalshi has no "game start"; the matcher's time window works on this). A contest is
 * `open` while any of its markets is tradeable (initialized/inactive/active/open), else `closed`.
 */
import type { Contest, League, Market, Participant, Partner, PositionDefinition } from '../../domain/catalog.js';
import { positionHash } from '../../domain/hashes.js';
import type { KalshiSide } from './book.js';
import { feeScheduleOf, type KalshiFeeSchedule } from './fees.js';
import type { KalshiEvent, KalshiMarket, KalshiPriceRange, KalshiSeries } from './messages.js';
import { PARTNER_ID, malformed } from './units.js';

export const KALSHI_MARKET: Market = {
  id: 'binary',
  key: 'binary',
  name: 'Yes / No',
  variable_required: false,
  allow_multiple_participants: true,
  side_keys: ['yes', 'no'],
};

export const KALSHI_TIMEFRAME = 'ft';

/** Market statuses under which the market still trades or will (OpenAPI 3.10.0 enum plus legacy `open`). */
const OPEN_STATUSES = new Set(['initialized', 'inactive', 'active', 'open', 'unopened', 'paused']);

/** What the adapter needs to know about one market, as plain data. */
export interface KalshiListing {
  ticker: string;
  event_ticker: string;
  series_ticker: string;
  contest_id: string;
  /** The position bought by buying each outcome (null: that outcome is not linked). */
  positions: Record<KalshiSide, string | null>;
  fee: KalshiFeeSchedule;
  price_ranges: KalshiPriceRange[] | null;
  fractional_trading_enabled: boolean;
  status: string;
  /** Last known asks (0-1) from the market record, used as a quote's price while its side is empty. */
  last_ask: Record<KalshiSide, number | null>;
}

export interface KalshiCatalog {
  leagues: League[];
  participants: Participant[];
  contests: Contest[];
  markets: Market[];
  contest_markets: { contest_id: string; market_id: string }[];
  positions: PositionDefinition[];
  partners: Partner[];
  listings: KalshiListing[];
}

export interface KalshiCatalogInput {
  series?: KalshiSeries[];
  events?: KalshiEvent[];
  markets: KalshiMarket[];
  partner: Partner;
  /** Override the native positions (the matcher's mapping); return null to leave an outcome unlinked. */
  positionOf?: (ticker: string, side: KalshiSide, native: string) => string | null;
}

export const seriesOfEvent = (eventTicker: string): string => {
  const i = eventTicker.indexOf('-');
  return i > 0 ? eventTicker.slice(0, i) : eventTicker;
};

const TICKER_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,190}$/;

function ticker(x: unknown, what: string): string {
  if (typeof x !== 'string' || !TICKER_RE.test(x)) throw malformed(what, { value: x });
  return x;
}

const isoOf = (...xs: (string | null | undefined)[]): string | null => {
  for (const x of xs) {
    if (typeof x === 'string' && Number.isFinite(Date.parse(x))) return new Date(Date.parse(x)).toISOString();
  }
  return null;
};

/** A dollar string in (0, 1) as a number, else null (0.0000 means "nothing there"). */
function askOf(x: unknown): number | null {
  if (typeof x !== 'string') return null;
  const n = Number(x);
  return n > 0 && n < 1 ? n : null;
}

function legacyAskOf(x: unknown): number | null {
  return typeof x === 'number' && x > 0 && x < 100 ? x / 100 : null;
}

export const contestIdOf = (eventTicker: string) => `kalshi-${eventTicker}`;
export const participantIdOf = (marketTicker: string) => `kalshi-${marketTicker}`;
export const leagueIdOf = (seriesTicker: string) => `kalshi-${seriesTicker}`;

/** The native position of buying `side` of market `marketTicker` in event `eventTicker`. */
export function nativePosition(eventTicker: string, marketTicker: string, side: KalshiSide): string {
  return positionHash({
    contest_id: contestIdOf(eventTicker),
    market_id: KALSHI_MARKET.id,
    side_key: side,
    variable: 0,
    participant_id: participantIdOf(marketTicker),
    timeframe: KALSHI_TIMEFRAME,
  });
}

/** Builds the catalog. Markets that are not binary are skipped (Kalshi's scalar markets pay a range). */
export function buildKalshiCatalog(input: KalshiCatalogInput): KalshiCatalog {
  const seriesBy = new Map<string, KalshiSeries>();
  for (const s of input.series ?? []) seriesBy.set(ticker(s?.ticker, 'series.ticker'), s);
  const eventBy = new Map<string, KalshiEvent>();
  for (const e of input.events ?? []) eventBy.set(ticker(e?.event_ticker, 'event.event_ticker'), e);

  const leagues = new Map<string, League>();
  const contests = new Map<string, Contest>();
  const participants: Participant[] = [];
  const positions: PositionDefinition[] = [];
  const listings: KalshiListing[] = [];
  const seenTickers = new Set<string>();

  for (const m of input.markets) {
    const t = ticker(m?.ticker, 'market.ticker');
    const ev = ticker(m.event_ticker, 'market.event_ticker');
    if (m.market_type !== undefined && m.market_type !== 'binary') continue;
    if (seenTickers.has(t)) continue;
    seenTickers.add(t);
    const event = eventBy.get(ev);
    const seriesTicker = event?.series_ticker ? ticker(event.series_ticker, 'event.series_ticker') : seriesOfEvent(ev);
    const series = seriesBy.get(seriesTicker);
    const leagueId = leagueIdOf(seriesTicker);
    const contestId = contestIdOf(ev);
    const status = typeof m.status === 'string' ? m.status : 'active';
    const open = OPEN_STATUSES.has(status);

    if (!leagues.has(leagueId)) {
      leagues.set(leagueId, { id: leagueId, name: series?.title || seriesTicker, participant_type: null, status: 'active' });
    }
    const created = isoOf(m.created_time, m.open_time) ?? new Date(0).toISOString();
    const updated = isoOf(m.updated_time, m.created_time, m.open_time) ?? created;
    const startsAt = isoOf(m.occurrence_datetime, m.expected_expiration_time ?? undefined, m.close_time) ?? created;
    const prev = contests.get(contestId);
    if (!prev) {
      contests.set(contestId, {
        id: contestId,
        league_id: leagueId,
        title: event?.title || m.title || ev,
        type: 'event',
        parent_contest_id: null,
        starts_at: startsAt,
        status: open ? 'open' : 'closed',
        has_markets: true,
        tags: {
          source: 'kalshi',
          ...(event?.sub_title ? { event_title: event.sub_title } : {}),
          kalshi: {
            series_ticker: seriesTicker,
            event_ticker: ev,
            mutually_exclusive: event?.mutually_exclusive ?? null,
            category: series?.category ?? null,
          },
        },
        created_at: created,
        updated_at: updated,
      });
    } else {
      // An event's window is its earliest market's; it stays open while any market trades.
      if (startsAt < prev.starts_at) prev.starts_at = startsAt;
      if (open) prev.status = 'open';
      if (created < prev.created_at) prev.created_at = created;
      if (updated > prev.updated_at) prev.updated_at = updated;
    }

    const pid = participantIdOf(t);
    const subject = m.yes_sub_title || m.subtitle || m.title || t;
    participants.push({ id: pid, league_id: leagueId, name: subject, abbr: null, image_url: null, country: null });
    const linked: Record<KalshiSide, string | null> = { yes: null, no: null };
    for (const side of ['yes', 'no'] as const) {
      const native = nativePosition(ev, t, side);
      linked[side] = input.positionOf ? input.positionOf(t, side, native) : native;
      positions.push({
        position_hash: native,
        contest_id: contestId,
        title: `${m.title && m.title !== subject ? `${m.title} — ${subject}` : subject}: ${side === 'yes' ? 'Yes' : 'No'}`,
        market_id: KALSHI_MARKET.id,
        market_key: KALSHI_MARKET.key,
        side_key: side,
        variable: 0,
        participant_id: pid,
        participant_name: subject,
        participant_image_url: null,
        timeframe: KALSHI_TIMEFRAME,
        group_key: `${contestId}/${t}`,
        ladder_key: null,
      });
    }
    listings.push({
      ticker: t,
      event_ticker: ev,
      series_ticker: seriesTicker,
      contest_id: contestId,
      positions: linked,
      fee: feeScheduleOf(series),
      price_ranges: Array.isArray(m.price_ranges) ? m.price_ranges : null,
      fractional_trading_enabled: m.fractional_trading_enabled === true,
      status,
      last_ask: {
        yes: askOf(m.yes_ask_dollars) ?? legacyAskOf(m.yes_ask),
        no: askOf(m.no_ask_dollars) ?? legacyAskOf(m.no_ask),
      },
    });
  }

  const contestList = [...contests.values()];
  return {
    leagues: [...leagues.values()],
    participants,
    contests: contestList,
    markets: contestList.length ? [{ ...KALSHI_MARKET, side_keys: [...KALSHI_MARKET.side_keys] }] : [],
    contest_markets: contestList.map((c) => ({ contest_id: c.id, market_id: KALSHI_MARKET.id })),
    positions,
    partners: [structuredClone(input.partner)],
    listings,
  };
}

export { PARTNER_ID };
