/**
 * Temporary directories of a test run. Each is named after the run (FLOW_TEST_RUN, set by
 * test/support/global-setup.ts), so the run's teardown removes whatever is left: embedded chDB
 * may recreate its directories after a test removed them (the engine lives as long as the
 * process), and vitest ends its worker processes without their exit handlers.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

const run = (): string => process.env.FLOW_TEST_RUN ?? 'solo';

/** A fresh directory `flow-<name>-<run>-XXXXXX`; its owner removes it, and the run's teardown what is left. */
export function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `flow-${name}-${run()}-`));
}

/** Removes what is left of a run's directories (the run's teardown). */
export function removeRunDirs(tag: string): number {
  let n = 0;
  for (const d of readdirSync(tmpdir())) {
    if (!d.startsWith('flow-') || !d.includes(`-${tag}-`)) continue;
    rmSync(join(tmpdir(), d), { recursive: true, force: true });
    n++;
  }
  return n;
}

/**
 * A scratch directory for a test's files (mapping files, copied recordings), removed when the test
 * ends (called inside a test) or when the file's tests end (called while they are collected).
 */
export function scratchDir(name: string): string {
  const dir = tempDir(name);
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a test: the file's module or a describe is being collected.
    afterAll(remove);
  }
  return dir;
}
