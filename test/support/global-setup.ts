/**
 * The test run's own tag (FLOW_TEST_RUN, inherited by vitest's worker processes): temporary
 * directories carry it (test/support/scratch.ts), and the run removes what is left of its own at
 * the end, never another run's.
 */
import { randomBytes } from 'node:crypto';
import { removeRunDirs } from './scratch.js';

export default function setup(): () => void {
  const tag = `r${randomBytes(4).toString('hex')}`;
  process.env.FLOW_TEST_RUN = tag;
  return () => {
    removeRunDirs(tag);
  };
}
