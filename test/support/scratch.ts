/**
 * A scratch directory for a test's files (mapping files, copied recordings), removed when the test
 * ends (called inside a test) or when the file's tests end (called while they are collected), so a
 * suite run leaves nothing in the OS temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a test: the file's module or a describe is being collected.
    afterAll(remove);
  }
  return dir;
}
