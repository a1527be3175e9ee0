/**
 * The rows `flow history import` accepts (docs/history.md, "Importing recorded history"): one
 * recorded tick or trade print per record, checked with the rules the live path applies before
 * anything is stored. Records come from CSV (every value a string), JSONL or Parquet (typed
 * values), so each field accepts either spelling of its value. Pure: the clock is an argument.
 */
import type { TickRow } from './history.js';
import type { TradePrint } from './stream.js';
import { normalizeVenueTrade, parseTradeTime, type TakerAction } from './trades.js';

export const IMPORT_KINDS = ['ticks', 'trades'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export const TICK_FIELDS = {
  required: ['ts', 'contest_id', 'position_hash', 'partner_id', 'price', 'available', 'liquidity_hash'],
  optional: ['source', 'outlier'],
} as const;

export const TRADE_FIELDS = {
  required: [
    'executed_at',
    'router_contest_id',
    'position_hash',
    'partner_id',
    'venue_trade_id',
    'venue_market_id',
    'liquidity_hash',
    'router_market_id',
    'taker_action',
    'price',
    'size_contracts',
  ],
  optional: ['partner_name', 'notional_usd', 'is_block', 'trader_id', 'trader_id_kind'],
} as const;

export const IMPORT_FIELDS: Record<ImportKind, { required: readonly string[]; optional: readonly string[] }> = {
  ticks: TICK_FIELDS,
  trades: TRADE_FIELDS,
};

/** Longest id accepted (the REST id rule); hashes name six parts, so they may be longer. */
export const MAX_ID_LENGTH = 200;
export const MAX_HASH_LENGTH = 500;
/** A recorded row may be stamped at most this far past the importer's clock (clock skew). */
export const MAX_FUTURE_SKEW_MS = 86_400_000;
/** DateTime64(3) ends in 2299; nothing recorded is later than this bound anyway. */
export const MAX_IMPORT_MS = 9_999_999_999_999;

export type ImportRecord = Readonly<Record<string, unknown>>;

export type ImportResult<T> = { ok: true; row: T } | { ok: false; problems: string[] };

/**
 * The kind a file holds, from its column names: trades carry executed_at or venue_trade_id, ticks
 * carry ts. Null when neither.
 */
export function detectImportKind(columns: readonly string[]): ImportKind | null {
  const has = new Set(columns);
  if (has.has('executed_at') || has.has('venue_trade_id')) return 'trades';
  if (has.has('ts')) return 'ticks';
  return null;
}

/** Columns a header lacks and columns it has that the kind does not know. */
export function checkColumns(kind: ImportKind, columns: readonly string[]): string[] {
  const { required, optional } = IMPORT_FIELDS[kind];
  const known = new Set([...required, ...optional]);
  const have = new Set(columns);
  const problems: string[] = [];
  const missing = required.filter((c) => !have.has(c));
  if (missing.length) problems.push(`missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  const unknown = columns.filter((c) => !known.has(c));
  if (unknown.length) problems.push(`unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((c) => JSON.stringify(c)).join(', ')} (a ${kind} file has ${[...required, ...optional].join(', ')})`);
  const dup = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (dup.length) problems.push(`column${dup.length > 1 ? 's' : ''} ${[...new Set(dup)].join(', ')} appear more than once`);
  return problems;
}

// C0 and C1 control characters (NUL, tab, line breaks, DEL, ...): never part of an id.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const absent = (v: unknown): boolean => v === undefined || v === null || v === '';

class Fields {
  readonly problems: string[] = [];
  constructor(private readonly rec: ImportRecord) {}

  /** A required id: a non-empty string without control characters, at most `max` characters. */
  id(name: string, max = MAX_ID_LENGTH): string {
    const v = this.rec[name];
    if (absent(v)) {
      this.problems.push(`${name} is missing`);
      return '';
    }
    return this.idValue(name, v, max);
  }

  /** An optional id: null when absent. */
  optionalId(name: string, max = MAX_ID_LENGTH): string | null {
    const v = this.rec[name];
    return absent(v) ? null : this.idValue(name, v, max);
  }

  private idValue(name: string, v: unknown, max: number): string {
    if (typeof v !== 'string') {
      this.problems.push(`${name} must be a string`);
      return '';
    }
    if (CONTROL.test(v)) this.problems.push(`${name} contains a control character`);
    else if (v.length > max) this.problems.push(`${name} is longer than ${max} characters`);
    else if (v.trim() !== v || v.length === 0) this.problems.push(`${name} has leading or trailing spaces`);
    return v;
  }

  /** A finite number, written as a JSON number or a decimal string. */
  number(name: string, optional = false): number | undefined {
    const v = this.rec[name];
    if (absent(v)) {
      if (!optional) this.problems.push(`${name} is missing`);
      return undefined;
    }
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isFinite(n)) {
      this.problems.push(`${name} ${JSON.stringify(v)} is not a number`);
      return undefined;
    }
    return n;
  }

  /** A 0-1 price. */
  price(name: string): number {
    const n = this.number(name);
    if (n !== undefined && !(n >= 0 && n <= 1)) this.problems.push(`${name} ${n} is not a 0-1 probability`);
    return n ?? NaN;
  }

  /** true/false, 1/0 (any case); absent is `fallback`. */
  bool(name: string, fallback: boolean): boolean {
    const v = this.rec[name];
    if (absent(v)) return fallback;
    if (v === true || v === 1 || (typeof v === 'string' && /^(true|1)$/i.test(v))) return true;
    if (v === false || v === 0 || (typeof v === 'string' && /^(false|0)$/i.test(v))) return false;
    this.problems.push(`${name} ${JSON.stringify(v)} is not true or false`);
    return fallback;
  }

  /**
   * A time: unix milliseconds (an integer) or an ISO 8601 date-time with a zone. Sane means after
   * the epoch and at most a day past `nowMs`: a recorded row cannot come from the future.
   */
  time(name: string, nowMs: number): number {
    const v = this.rec[name];
    if (absent(v)) {
      this.problems.push(`${name} is missing`);
      return NaN;
    }
    let ms: number | null = null;
    if (typeof v === 'number') ms = Number.isSafeInteger(v) ? v : null;
    else if (typeof v === 'string') ms = parseTradeTime(v.trim());
    if (ms === null || ms < 0 || ms > MAX_IMPORT_MS) {
      this.problems.push(`${name} ${JSON.stringify(v)} is not unix milliseconds or an ISO 8601 date-time with a zone (e.g. 2026-11-20T12:00:00Z)`);
      return NaN;
    }
    if (ms > nowMs + MAX_FUTURE_SKEW_MS) this.problems.push(`${name} ${new Date(ms).toISOString()} is in the future`);
    return ms;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback?: T): T {
    const v = this.rec[name];
    if (absent(v) && fallback !== undefined) return fallback;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    this.problems.push(absent(v) ? `${name} is missing` : `${name} ${JSON.stringify(v)} is not one of ${allowed.join(', ')}`);
    return fallback ?? allowed[0]!;
  }
}

/** A recorded tick, checked: ids, a 0-1 price, a non-negative size, a sane time. */
export function validateTickRecord(rec: ImportRecord, nowMs: number): ImportResult<TickRow> {
  const f = new Fields(rec);
  const row: TickRow = {
    ts: f.time('ts', nowMs),
    contest_id: f.id('contest_id'),
    position_hash: f.id('position_hash', MAX_HASH_LENGTH),
    partner_id: f.id('partner_id'),
    price: f.price('price'),
    available: f.number('available') ?? NaN,
    liquidity_hash: f.id('liquidity_hash', MAX_HASH_LENGTH),
    source: f.oneOf('source', ['streaming', 'polling'] as const, 'streaming'),
    outlier: f.bool('outlier', false),
  };
  if (Number.isFinite(row.available) && row.available < 0) f.problems.push(`available ${row.available} is negative`);
  return f.problems.length ? { ok: false, problems: f.problems } : { ok: true, row };
}

/**
 * A recorded trade print, checked and completed by normalizeVenueTrade (the live ingest path's
 * rule): the print is already oriented to position_hash, so the link is `same`. notional_usd, when
 * given, must be what the rule computes (size × price), to catch a column mix-up.
 */
export function validateTradeRecord(rec: ImportRecord, nowMs: number): ImportResult<TradePrint> {
  const f = new Fields(rec);
  const executedMs = f.time('executed_at', nowMs);
  const trade = {
    partner_id: f.id('partner_id'),
    partner_name: f.optionalId('partner_name') ?? '',
    venue_trade_id: f.id('venue_trade_id', MAX_HASH_LENGTH),
    venue_market_id: f.id('venue_market_id', MAX_HASH_LENGTH),
    taker_action: f.oneOf<TakerAction>('taker_action', ['buy', 'sell']),
    price: f.price('price'),
    size_contracts: f.number('size_contracts') ?? NaN,
    is_block: f.bool('is_block', false),
    trader_id: f.optionalId('trader_id', MAX_HASH_LENGTH),
    trader_id_kind: f.optionalId('trader_id_kind'),
    executed_at: executedMs,
  };
  const link = {
    position_hash: f.id('position_hash', MAX_HASH_LENGTH),
    liquidity_hash: f.id('liquidity_hash', MAX_HASH_LENGTH),
    router_contest_id: f.id('router_contest_id'),
    router_market_id: f.id('router_market_id'),
    relation: 'same' as const,
  };
  const notional = f.number('notional_usd', true);
  if (f.problems.length) return { ok: false, problems: f.problems };
  const r = normalizeVenueTrade(trade, link);
  if (!r.ok) return { ok: false, problems: [r.reason] };
  if (notional !== undefined && Math.abs(notional - r.print.notional_usd) > 1e-6 * Math.max(1, Math.abs(notional))) {
    return { ok: false, problems: [`notional_usd ${notional} is not size_contracts × price (${r.print.notional_usd})`] };
  }
  return { ok: true, row: r.print };
}

/** The validator of a kind. */
export function importValidator(kind: ImportKind): (rec: ImportRecord, nowMs: number) => ImportResult<TickRow | TradePrint> {
  return kind === 'ticks' ? validateTickRecord : validateTradeRecord;
}
