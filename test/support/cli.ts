/** Runs the real CLI (`tsx cli/flow.ts ...`) as a child process with a test environment. */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(new URL('../..', import.meta.url).pathname);
export const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [path.join(ROOT, 'cli/flow.ts'), ...args], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
