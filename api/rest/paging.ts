/** Cursor pages (spec "Conventions": lists are cursor-paginated). */
import type { Pagination } from '../../src/domain/envelope.js';

/** A page of a list read with limit+1 rows, so has_more needs no count query; cursorOf names the last row kept. */
export function page<T>(rows: T[], limit: number, cursorOf: (last: T) => string): { items: T[]; pagination: Pagination } {
  const has_more = rows.length > limit;
  const items = has_more ? rows.slice(0, limit) : rows;
  return { items, pagination: { next_cursor: has_more ? cursorOf(items[items.length - 1]!) : null, has_more, limit } };
}
