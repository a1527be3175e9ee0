/** Where a worker thread's entry module is, from the build or from source. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `relative` (no extension) resolved against `base` (the caller's import.meta.url). From the build
 * the compiled `.js` sits beside the caller; from source (tests, `npm run flow`) a `.boot.mjs`
 * registers tsx in the new thread first, since a thread cannot load `.ts` by itself.
 */
export function threadFile(base: string, relative: string): string {
  const compiled = fileURLToPath(new URL(`${relative}.js`, base));
  if (base.endsWith('.js') && existsSync(compiled)) return compiled;
  return fileURLToPath(new URL(`${relative}.boot.mjs`, base));
}
