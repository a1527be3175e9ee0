/**
 * Position and liquidity hashes. These are the only ids the service builds from parts, and only
 * because it mints them; callers must treat them as opaque.
 *
 * position_hash  = contest : market : side : variable : participant : timeframe
 * liquidity_hash = partner_id : <partner-scoped key>
 */

export const HASH_SEPARATOR = ':';

export interface PositionKey {
  contest_id: string;
  market_id: string;
  side_key: string;
  /** Line value; 0 when the market has no line. */
  variable: number;
  participant_id: string;
  timeframe: string;
}

function assertPart(name: string, value: string): void {
  if (value.length === 0 || value.includes(HASH_SEPARATOR)) {
    throw new Error(`hash part ${name} must be non-empty and free of '${HASH_SEPARATOR}': ${JSON.stringify(value)}`);
  }
}

/** Formats a line value so that equal numbers always give equal hashes (no `-0`, no `1.50`). */
export function formatVariable(variable: number): string {
  if (!Number.isFinite(variable)) throw new Error(`variable must be finite: ${variable}`);
  const v = Object.is(variable, -0) ? 0 : variable;
  return String(Math.round(v * 1000) / 1000);
}

export function positionHash(key: PositionKey): string {
  assertPart('contest_id', key.contest_id);
  assertPart('market_id', key.market_id);
  assertPart('side_key', key.side_key);
  assertPart('participant_id', key.participant_id);
  assertPart('timeframe', key.timeframe);
  return [key.contest_id, key.market_id, key.side_key, formatVariable(key.variable), key.participant_id, key.timeframe].join(
    HASH_SEPARATOR,
  );
}

/** Parses a hash this service minted. Returns null for anything else (never throws on input). */
export function parsePositionHash(hash: string): PositionKey | null {
  const parts = hash.split(HASH_SEPARATOR);
  if (parts.length !== 6 || parts.some((p) => p.length === 0)) return null;
  const variable = Number(parts[3]);
  if (!Number.isFinite(variable)) return null;
  return {
    contest_id: parts[0]!,
    market_id: parts[1]!,
    side_key: parts[2]!,
    variable,
    participant_id: parts[4]!,
    timeframe: parts[5]!,
  };
}

/**
 * The contest of a hash this service minted: parsePositionHash(hash)?.contest_id ?? null, without
 * building the key (ingest asks it of every quote).
 */
export function contestOfPositionHash(hash: string): string | null {
  // The five separators: six non-empty parts and no seventh, the fourth a finite number.
  let prev = -1;
  let first = -1;
  let variableFrom = -1;
  let variableTo = -1;
  for (let k = 0; k < 5; k++) {
    const at = hash.indexOf(HASH_SEPARATOR, prev + 1);
    if (at <= prev + 1) return null;
    if (k === 0) first = at;
    else if (k === 2) variableFrom = at + 1;
    else if (k === 3) variableTo = at;
    prev = at;
  }
  if (prev === hash.length - 1 || hash.indexOf(HASH_SEPARATOR, prev + 1) >= 0) return null;
  if (!Number.isFinite(Number(hash.slice(variableFrom, variableTo)))) return null;
  return hash.slice(0, first);
}

/** liquidity_hash: the venue id first, then the venue's own key for the quote. */
export function liquidityHash(partnerId: string, partnerScopedKey: string): string {
  assertPart('partner_id', partnerId);
  if (partnerScopedKey.length === 0) throw new Error('partner-scoped key must be non-empty');
  return `${partnerId}${HASH_SEPARATOR}${partnerScopedKey}`;
}

/** The venue a liquidity_hash names (its first segment), or null when malformed. */
export function partnerOfLiquidityHash(hash: string): string | null {
  const i = hash.indexOf(HASH_SEPARATOR);
  if (i <= 0 || i === hash.length - 1) return null;
  return hash.slice(0, i);
}

/**
 * A 64-bit FNV-1a hash of `text` as 16 hex digits: stable ids built from their parts (arbitrage and
 * signal ids). Pure, so the compute workers (which import no Node module) can mint them. Not
 * cryptographic: the parts are public; the hash only makes the id short.
 */
export function fnv64Hex(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let k = 0; k < text.length; k++) {
    h ^= BigInt(text.charCodeAt(k));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}
