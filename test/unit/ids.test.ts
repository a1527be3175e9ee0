/** newId draws its random bytes in batches (src/ids.ts): ids stay well formed and distinct across batch boundaries. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';

describe('newId', () => {
  it('gives distinct, well-formed ids across many batches, whatever their size', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => newId('ord', i % 7 === 0 ? 30 : 12));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^ord_([A-Za-z0-9_-]{16}|[A-Za-z0-9_-]{40})$/);
    expect(newId('big', 5_000)).toHaveLength(4 + Math.ceil((5_000 * 4) / 3));
  });
});
