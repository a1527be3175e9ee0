/**
 * The parent's side of execute-child.ts: starts an execute worker in a child process whose venue
 * calls are answered by this process's simulator adapters (a venue outlives the worker it serves),
 * and reports how the child ended. Shared by the kill tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { VenueError } from '../../../src/venues/errors.js';
import type { VenueAdapter } from '../../../src/venues/types.js';
import { ROOT } from '../../support/cli.js';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ExecuteChild {
  proc: ChildProcess;
  ready: Promise<void>;
  exit: Promise<ExitStatus>;
  /** Asks the worker to finish its jobs and exit (code 0 when it did so cleanly). */
  stop(): Promise<ExitStatus>;
  /** Kills the worker at once, wherever it is. */
  kill(): Promise<ExitStatus>;
}

/** An execute worker in a child process; FLOW_FAILPOINTS `failpoint` (empty for none). */
export function executeChild(env: Record<string, string | undefined>, adapters: readonly VenueAdapter[], failpoint: string): ExecuteChild {
  // `node --import tsx`, not the tsx CLI: the CLI forks a second process that SIGKILL would not reach.
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/integration/faults/execute-child.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env, FLOW_FAILPOINTS: failpoint },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exit = new Promise<ExitStatus>((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  // A killed worker can die between the connected check and the write: with a callback the failed
  // send is handed to it (ignored: the worker's call dies with it, as a venue call of a killed
  // worker does) instead of surfacing as an unhandled 'error' event (EPIPE) on the process.
  const reply = (m: object) => {
    if (proc.connected) proc.send(m, () => {});
  };
  proc.on('message', (m: { type: string; n?: number; partner?: string; method?: string; args?: unknown[] }) => {
    if (m.type === 'ready') ready();
    else if (m.type === 'describe') reply({ type: 'descriptions', list: adapters.map((a) => a.describe()) });
    else if (m.type === 'call') {
      const adapter = adapters.find((a) => a.id === m.partner)! as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      adapter[m.method!]!.apply(adapter, m.args!).then(
        (value) => reply({ type: 'result', n: m.n, ok: true, value }),
        (err: unknown) => reply({ type: 'result', n: m.n, ok: false, error: { kind: err instanceof VenueError ? err.kind : null, code: err instanceof VenueError ? err.code : 'internal', message: String((err as Error).message) } }),
      );
    }
  });
  return {
    proc,
    ready: readyP,
    exit,
    async stop() {
      reply({ type: 'stop' });
      return exit;
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      return exit;
    },
  };
}
