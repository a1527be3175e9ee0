/**
 * What changed between the input a contest's run last computed and the next one: the clock and
 * the quotes of some positions (InputDelta), or more than that (null), in which case the next run
 * starts from scratch. Compared field by field, so inputs rebuilt from Redis on every job (new
 * objects, same values) read as unchanged; the same object is unchanged at once.
 */
import type { PositionDefinition } from '../domain/catalog.js';
import type { BookLevel, ContestInput, FeeModel, QuoteAgePolicy, VenueQuote } from './types.js';

/** A change to the input: the clock, and the positions whose quotes changed with their quotes now. */
export interface InputDelta {
  now_ms: number;
  positions: [number, readonly VenueQuote[]][];
}

/**
 * An InputDelta as it crosses threads (InputMirror.wire): per changed quote its position, its slot
 * (-1: the whole list) and the quote (or list). The quotes go as one JSON text when JSON gives them
 * back as they are (they came from JSON in Redis, as a rule): cloning a string costs a copy, cloning
 * a quote's objects ten times that.
 */
export interface WireDelta {
  now_ms: number;
  pos: number[];
  slot: number[];
  quotes?: (VenueQuote | readonly VenueQuote[])[];
  json?: string;
}

/** Whether JSON.parse(JSON.stringify(v)) reads as `v` does: finite numbers (not -0), strings, booleans, null, plain objects and arrays of them; an undefined member reads as absent. */
export function jsonFaithful(v: unknown, depth = 0): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (depth > 4) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (v[i] === undefined || !jsonFaithful(v[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined && !jsonFaithful(x, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** The InputDelta of a WireDelta, given the quotes each position has now; null when the wire names a slot the position does not have. */
export function unwire(w: WireDelta, quotesOf: (i: number) => readonly VenueQuote[] | undefined): InputDelta | null {
  const lists = new Map<number, VenueQuote[]>();
  const quotes = w.json !== undefined ? (JSON.parse(w.json) as NonNullable<WireDelta['quotes']>) : (w.quotes ?? []);
  if (quotes.length !== w.pos.length) return null;
  for (let k = 0; k < w.pos.length; k++) {
    const i = w.pos[k]!;
    const slot = w.slot[k]!;
    const q = quotes[k]!;
    if (slot < 0) {
      lists.set(i, (q as readonly VenueQuote[]).slice());
      continue;
    }
    let list = lists.get(i);
    if (list === undefined) {
      const now = quotesOf(i);
      if (now === undefined) return null;
      lists.set(i, (list = now.slice()));
    }
    if (!(slot < list.length)) return null;
    list[slot] = q as VenueQuote;
  }
  return { now_ms: w.now_ms, positions: [...lists] };
}

/** The catalog fields of a position (every field of PositionDefinition), in the order InputMirror keeps them. */
const DEFINITION_FIELDS = [
  'position_hash',
  'contest_id',
  'title',
  'market_id',
  'market_key',
  'side_key',
  'variable',
  'participant_id',
  'participant_name',
  'participant_image_url',
  'timeframe',
  'group_key',
  'ladder_key',
] as const satisfies readonly (keyof PositionDefinition)[];
const FIELDS = DEFINITION_FIELDS.length;

/**
 * The input a contest's last run computed, kept for comparing the next one with: the contest's
 * facts, every position's catalog fields in one flat array and its quotes. Flat arrays rather than
 * the position objects, because the comparison runs on every change and these are read once per
 * change, long after they were written: a few contiguous arrays stay cheap to read where two
 * hundred objects spread over the heap do not.
 */
export class InputMirror {
  private readonly contestId: string;
  private readonly label: string | null;
  private readonly leagueId: string | null;
  private readonly policy: QuoteAgePolicy | undefined;
  private readonly definitions: unknown[];
  private readonly quotes: (readonly VenueQuote[])[];

  constructor(input: ContestInput) {
    this.contestId = input.contest_id;
    this.label = input.label ?? null;
    this.leagueId = input.league_id ?? null;
    this.policy = input.max_quote_age_ms;
    const n = input.positions.length;
    this.definitions = new Array<unknown>(n * FIELDS);
    this.quotes = new Array<readonly VenueQuote[]>(n);
    for (let i = 0; i < n; i++) {
      const p = input.positions[i]!;
      for (let f = 0; f < FIELDS; f++) this.definitions[i * FIELDS + f] = p[DEFINITION_FIELDS[f]!];
      this.quotes[i] = p.quotes;
    }
  }

  /**
   * What changed from the kept input to `next`: the clock and the positions whose quotes differ
   * (field by field), or null when more than that changed (the contest's label, league or age
   * policy, a position's catalog fields, the positions themselves).
   */
  delta(next: ContestInput): InputDelta | null {
    if (
      this.contestId !== next.contest_id ||
      this.label !== (next.label ?? null) ||
      this.leagueId !== (next.league_id ?? null) ||
      !samePolicy(this.policy, next.max_quote_age_ms) ||
      this.quotes.length !== next.positions.length
    ) {
      return null;
    }
    const positions: InputDelta['positions'] = [];
    const defs = this.definitions;
    for (let i = 0; i < this.quotes.length; i++) {
      const p = next.positions[i]!;
      const at = i * FIELDS;
      if (
        defs[at] !== p.position_hash ||
        defs[at + 1] !== p.contest_id ||
        defs[at + 2] !== p.title ||
        defs[at + 3] !== p.market_id ||
        defs[at + 4] !== p.market_key ||
        defs[at + 5] !== p.side_key ||
        !Object.is(defs[at + 6], p.variable) ||
        defs[at + 7] !== p.participant_id ||
        defs[at + 8] !== p.participant_name ||
        defs[at + 9] !== p.participant_image_url ||
        defs[at + 10] !== p.timeframe ||
        defs[at + 11] !== p.group_key ||
        defs[at + 12] !== p.ladder_key
      ) {
        return null;
      }
      if (!sameQuotes(this.quotes[i]!, p.quotes)) positions.push([i, p.quotes]);
    }
    return { now_ms: next.now_ms, positions };
  }

  /**
   * `delta` (computed by delta, not yet applied) as it crosses to a thread: a position that kept its
   * number of quotes sends only the quotes that differ, by slot; another its whole list.
   */
  wire(delta: InputDelta): WireDelta {
    const out: NonNullable<WireDelta['quotes']> = [];
    const w: WireDelta = { now_ms: delta.now_ms, pos: [], slot: [] };
    for (const [i, quotes] of delta.positions) {
      const kept = this.quotes[i]!;
      if (kept.length !== quotes.length) {
        w.pos.push(i);
        w.slot.push(-1);
        out.push(quotes);
        continue;
      }
      for (let j = 0; j < quotes.length; j++) {
        if (sameQuote(kept[j]!, quotes[j]!)) continue;
        w.pos.push(i);
        w.slot.push(j);
        out.push(quotes[j]!);
      }
    }
    if (jsonFaithful(out)) w.json = JSON.stringify(out);
    else w.quotes = out;
    return w;
  }

  /** Takes in a delta (as computed by delta, for the input now kept). */
  apply(delta: InputDelta): void {
    for (const [i, quotes] of delta.positions) this.quotes[i] = quotes;
  }
}

function sameQuotes(a: readonly VenueQuote[], b: readonly VenueQuote[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (!sameQuote(a[j]!, b[j]!)) return false;
  return true;
}

/** Every field of VenueQuote; a level is compared whole (depth writes the level objects as they are). */
export function sameQuote(a: VenueQuote, b: VenueQuote): boolean {
  if (a === b) return true;
  return (
    a.liquidity_hash === b.liquidity_hash &&
    Object.is(a.price, b.price) &&
    Object.is(a.available, b.available) &&
    a.as_of === b.as_of &&
    a.ts_event === b.ts_event &&
    a.stale_after_ms === b.stale_after_ms &&
    a.stale === b.stale &&
    a.partner_id === b.partner_id &&
    a.partner_name === b.partner_name &&
    a.venue_side_key === b.venue_side_key &&
    a.source === b.source &&
    a.real_book === b.real_book &&
    sameFlat(a.fee, b.fee) &&
    sameLevels(a.levels, b.levels)
  );
}

function sameLevels(a: readonly BookLevel[], b: readonly BookLevel[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (!sameFlat(a[k]!, b[k]!)) return false;
  return true;
}

/** Two objects of primitive members with the same members (a fee model, a book level). */
function sameFlat(a: FeeModel | BookLevel | undefined, b: FeeModel | BookLevel | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  let count = 0;
  for (const k in x) {
    if (!Object.is(x[k], y[k]) || !Object.hasOwn(y, k)) return false;
    count++;
  }
  for (const k in y) if (--count < 0 || !Object.hasOwn(x, k)) return false;
  return count === 0;
}

function samePolicy(a: QuoteAgePolicy | undefined, b: QuoteAgePolicy | undefined): boolean {
  if (a === b) return true;
  return a !== undefined && b !== undefined && a.streaming === b.streaming && a.polling === b.polling;
}
