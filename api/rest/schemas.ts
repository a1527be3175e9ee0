/**
 * Schema pieces shared by routes. One TypeBox schema is both the validator and the type.
 *
 * Every value a route hands to a store is built from these blocks, so the stores' own limits are
 * checked at the edge with a 400 `invalid_parameter` instead of failing inside the store: PostgreSQL
 * refuses a NUL byte in text (a 500), the ClickHouse client refuses integers beyond 2^53 (a 503 that
 * told the client to retry an input error), and JavaScript dates end at year 275760.
 */
import { Type, type TSchema } from 'typebox';
import { MAX_UNIX_MS } from '../../src/domain/history.js';
import { badRequest } from '../../src/errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../src/pagination.js';

/**
 * No control characters (C0, DEL, C1: NUL above all) and no lone UTF-16 surrogates, which no
 * store keeps as sent. Ajv compiles patterns with the `u` flag, so a well-formed pair (an emoji)
 * is one code point and passes.
 */
export const PRINTABLE_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$';

const printable = new RegExp(PRINTABLE_PATTERN, 'u');
/** The Id rule for values that arrive outside a schema (a token's claims). */
export const isSafeId = (s: string): boolean => s.length > 0 && s.length <= 200 && printable.test(s);

/** Free text with a bound, safe for every store. */
export const Text = (opts: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({ minLength: opts.minLength ?? 0, maxLength: opts.maxLength, pattern: PRINTABLE_PATTERN, ...(opts.description ? { description: opts.description } : {}) });

/** Over the maximum is a 400, not a silent clamp: a quant asking for 500 rows should know they got 200. */
export const Limit = (max = MAX_LIMIT, def = DEFAULT_LIMIT) =>
  Type.Integer({ minimum: 1, maximum: max, default: def, description: `page size, default ${def}, max ${max}` });

export const Cursor = Text({ minLength: 1, maxLength: 1024, description: 'next_cursor of the previous page, verbatim' });

/** Any catalog or account id: leagues, contests, participants, markets, partners, accounts. */
export const Id = Text({ minLength: 1, maxLength: 200 });

/** A position hash (`contest:market:participant:line:side:timeframe`, longer than a plain id). */
export const PositionHash = Text({ minLength: 1, maxLength: 500 });

/** A comma-separated filter value; the spec lets comma filters carry several values. */
export const CommaList = (maxLength = 4000) => Text({ minLength: 1, maxLength, description: 'comma-separated values' });

/** A unix-ms instant in a range every store can hold: 1970 up to MAX_UNIX_MS (year 2286). */
export const UnixMs = Type.Integer({ minimum: 0, maximum: MAX_UNIX_MS, description: 'unix milliseconds' });

/** Years 1970-2285, the range UnixMs covers, so an ISO time and a unix-ms time bound alike. */
const ISO_YEAR = '^(19[7-9][0-9]|20[0-9]{2}|21[0-9]{2}|22[0-7][0-9]|228[0-5])-';
export const IsoTime = (description = 'ISO 8601 date-time with a zone') =>
  Type.String({ format: 'date-time', pattern: ISO_YEAR, maxLength: 40, description });

/**
 * A size, amount or balance. No book, trade or balance comes near a trillion; beyond it a value is a
 * mistake that would only overflow sums downstream.
 */
export const MAX_QUANTITY = 1e12;
export const Quantity = (opts: { exclusiveMinimum?: number; description?: string } = {}) =>
  Type.Number({ ...(opts.exclusiveMinimum !== undefined ? { exclusiveMinimum: opts.exclusiveMinimum } : { minimum: 0 }), maximum: MAX_QUANTITY, ...(opts.description ? { description: opts.description } : {}) });

/** An object of named values whose names are ids (bounded and printable), at most `max` of them. */
export const IdRecord = <T extends TSchema>(value: T, max: number) =>
  Type.Record(Type.String(), value, { maxProperties: max, propertyNames: { minLength: 1, maxLength: 500, pattern: PRINTABLE_PATTERN } });

export function splitList(name: string, raw: string | undefined, max = 200): string[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s.length === 0)) throw badRequest('invalid_parameter', `${name} has an empty item`, { parameter: name });
  if (items.length > max) throw badRequest('invalid_parameter', `${name} accepts at most ${max} values`, { parameter: name });
  return [...new Set(items)];
}

export const IdParams = Type.Object({ id: Id });
