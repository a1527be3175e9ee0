/**
 * A recordings folder with one cross-venue pair (not a test file): the repo's recorded Kalshi and
 * Polymarket copies, plus the synthetic pair of fixtures/synthetic-pair/README.md under each venue's
 * `synthetic/` folder (read after the recorded files: the recorded books are lent as without it).
 *
 *   const dir = syntheticPairRecordings();   // a fresh temporary folder; the caller removes it
 *   const replay = await startReplayServer({ dir });
 */
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../../support/scratch.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VENUES = join(HERE, '..');
const PAIR = join(HERE, 'fixtures', 'synthetic-pair');

/** The recorded Kalshi game of the pair, and the hand-written Polymarket event it matches. */
export const PAIR_KALSHI_CONTEST = 'kalshi-KXNFLGAME-25DEC27BALGB';
export const PAIR_POLYMARKET_CONTEST = 'pm_ev_900001';

export function syntheticPairRecordings(): string {
  const dir = scratchDir('replay-pair');
  for (const venue of ['kalshi', 'polymarket']) {
    cpSync(join(VENUES, venue, 'fixtures'), join(dir, venue), { recursive: true });
    cpSync(join(PAIR, venue), join(dir, venue, 'synthetic'), { recursive: true });
  }
  cpSync(join(VENUES, 'matching', 'fixtures', 'gamma-events-nfl-ravens-packers.json'), join(dir, 'polymarket', 'synthetic', 'rest-gamma-events-nfl-ravens-packers.json'));
  return dir;
}
