/** Runs the real CLI (`cli/flow.ts` from source through tsx's loader) as a child process with a test environment. */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(new URL('../..', import.meta.url).pathname);
/**
 * `node --import tsx cli/flow.ts ...`: one process. The tsx CLI would run the service in a grandchild
 * and relay signals to it, and its relay can end with the parent killed (exit 143) before the
 * service's own SIGTERM handler ran: seen as a flaky shutdown test in CI.
 */
export function flowCommand(args: string[]): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', path.join(ROOT, 'cli/flow.ts'), ...args]];
}

export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [cmd, argv] = flowCommand(args);
    const child = spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
