/** Lets a scenario file run on its own (`npx tsx bench/<name>.ts`) as well as through bench/run.ts. */
import { pathToFileURL } from 'node:url';

export function isMain(metaUrl: string): boolean {
  return !!process.argv[1] && metaUrl === pathToFileURL(process.argv[1]).href;
}

export function runIfMain(metaUrl: string, run: (args: string[]) => Promise<unknown>): void {
  if (!isMain(metaUrl)) return;
  run(process.argv.slice(2)).then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
