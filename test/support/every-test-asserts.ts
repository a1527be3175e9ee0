/**
 * Setup file for every test file: a test that makes no assertion fails, so a test cannot pass by
 * returning early or by a promise nobody awaited. A capability or environment a test cannot use is
 * a visible skip (`ctx.skip(reason)` / `it.skipIf`), never a silent return.
 */
import { beforeEach, expect } from 'vitest';

beforeEach(() => {
  expect.hasAssertions();
});
