/**
 * The practice leg's terms computed in JavaScript (src/domain/paper-terms.ts) equal, digit for digit
 * as text, what PostgreSQL's numeric computed for them before (the expression is kept here as the
 * reference): random amounts, shares and prices of the shapes a buy sends, in batches of one query.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paperTerms, type PaperSize } from '../../../src/domain/paper-terms.js';
import { PG_BASE } from '../../support/stack.js';

const REFERENCE = `SELECT i::int AS i, stake::text AS stake, shares::text AS shares, stake > 0 AS positive
  FROM (SELECT i, CASE WHEN a IS NOT NULL THEN a ELSE round(s * p, 6) END AS stake,
                  CASE WHEN a IS NOT NULL THEN trunc(a / p, 6) ELSE s END AS shares
          FROM unnest($1::numeric[], $2::numeric[], $3::numeric[]) WITH ORDINALITY AS t(a, s, p, i)) x
 ORDER BY i`;

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: PG_BASE });
  await client.connect();
});
afterAll(async () => client?.end());

async function reference(legs: PaperSize[]) {
  const { rows } = await client.query(REFERENCE, [legs.map((l) => l.amount), legs.map((l) => l.shares), legs.map((l) => l.price)]);
  return rows.map(({ stake, shares, positive }) => ({ stake, shares, positive }));
}

/** A decimal of at most six places as the buy writes one (microsText or a number's shortest text). */
const sixPlaces = (max: number) => fc.integer({ min: 0, max: max * 1_000_000 }).map((m) => String(m / 1_000_000));
/** A price as a quote carries it: (0, 1], at most six decimals, its shortest text. */
const price = fc.integer({ min: 1, max: 1_000_000 }).map((m) => String(m / 1_000_000));
const leg: fc.Arbitrary<PaperSize> = fc.oneof(
  fc.record({ amount: sixPlaces(1_000_000), shares: fc.constant(null), price }),
  fc.record({ amount: fc.constant(null), shares: sixPlaces(1_000_000), price }),
);

describe('paper terms', () => {
  it('equal numeric’s round(s × p, 6), trunc(a / p, 6) and the values given, as text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(leg, { minLength: 1, maxLength: 50 }), async (legs) => {
        expect(legs.map(paperTerms)).toEqual(await reference(legs));
      }),
      { numRuns: 200 },
    );
  });

  it('at the edges: a stake that rounds to nothing, half a micro rounded up, exponent text, whole numbers', async () => {
    const legs: PaperSize[] = [
      { amount: null, shares: '0.000001', price: '0.01' },
      { amount: null, shares: '0.5', price: '0.000001' },
      { amount: null, shares: '1.5', price: '0.000001' },
      { amount: '0', shares: null, price: '0.3' },
      { amount: '1', shares: null, price: '0.3' },
      { amount: '10', shares: null, price: '1' },
      { amount: null, shares: '3', price: '1e-6' },
      { amount: '1000000000000', shares: null, price: '0.999999' },
    ];
    const got = legs.map(paperTerms);
    expect(got).toEqual(await reference(legs));
    expect(got[0]).toEqual({ stake: '0.000000', shares: '0.000001', positive: false });
    expect(got[1]!.stake).toBe('0.000001');
    expect(got[4]).toEqual({ stake: '1', shares: '3.333333', positive: true });
  });
});
