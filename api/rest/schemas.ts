/** Schema pieces shared by routes. One TypeBox schema is both the validator and the type. */
import { Type } from 'typebox';
import { badRequest } from '../../src/errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../src/pagination.js';

/** Over the maximum is a 400, not a silent clamp: a quant asking for 500 rows should know they got 200. */
export const Limit = (max = MAX_LIMIT, def = DEFAULT_LIMIT) =>
  Type.Integer({ minimum: 1, maximum: max, default: def, description: `page size, default ${def}, max ${max}` });

export const Cursor = Type.String({ minLength: 1, maxLength: 1024, description: 'next_cursor of the previous page, verbatim' });

export const Id = Type.String({ minLength: 1, maxLength: 200 });

/** A comma-separated filter value; the spec lets comma filters carry several values. */
export const CommaList = Type.String({ minLength: 1, maxLength: 4000, description: 'comma-separated values' });

export function splitList(name: string, raw: string | undefined, max = 200): string[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s.length === 0)) throw badRequest('invalid_parameter', `${name} has an empty item`, { parameter: name });
  if (items.length > max) throw badRequest('invalid_parameter', `${name} accepts at most ${max} values`, { parameter: name });
  return [...new Set(items)];
}

export const IdParams = Type.Object({ id: Id });
