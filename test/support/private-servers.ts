/**
 * Private Redis and PostgreSQL servers for fault tests: each on a free port in its own temp dir, so a
 * test may SIGKILL and restart it without touching the shared servers (127.0.0.1:6379 and :5432,
 * which nothing here ever stops). Redis runs without persistence, so a restart comes back empty,
 * as after a crash of a cache-only deployment.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A port nothing listens on now (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** Polls until the condition holds or the deadline passes (no fixed sleeps). */
export async function until(check: () => Promise<boolean> | boolean, ms: number, what: string, everyMs = 25): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** SIGKILL, and wait until the process is gone (no-op when there is none). */
async function sigkill(c: ChildProcess | null): Promise<void> {
  if (!c) return;
  c.kill('SIGKILL');
  await exited(c);
}

/** A test process that dies (or forgets its afterAll) must not leave its servers running. */
function killOnExit(c: ChildProcess): void {
  const onExit = () => c.kill('SIGKILL');
  process.once('exit', onExit);
  c.once('exit', () => process.removeListener('exit', onExit));
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL: no shutdown, no save; clients see their connections reset. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty; resolves once it answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'flow-fault-redis-'));
  let child: ChildProcess | null = null;
  const start = async () => {
    if (child) return; // already running: a second server could not bind the port anyway
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', path.join(dir, 'redis.log')], {
      stdio: 'ignore',
    });
    child = c;
    killOnExit(c);
    await until(async () => c.exitCode === null && (await portOpen(port)), 10_000, `private redis on ${port}`);
  };
  const kill = async () => {
    const c = child;
    child = null;
    await sigkill(c);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivatePostgres {
  port: number;
  /** A URL for `database` on this server (user postgres, trust auth). */
  url(database: string): string;
  /** SIGKILL of the postmaster (its backends exit on their own). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function pgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(a) - Number(b)) : [];
  const v = versions.at(-1);
  if (!v) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql (bash infra/services.sh up installs them)');
  return path.join(root, v, 'bin');
}

/** PostgreSQL refuses to run as root: run it as the postgres user then (as infra/services.sh does). */
function pgUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const bin = pgBin();
  const user = pgUser();
  const dir = mkdtempSync(path.join(tmpdir(), 'flow-fault-pg-'));
  const data = path.join(dir, 'data');
  if (user) chownSync(dir, user.uid, user.gid);
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync'], { stdio: 'ignore', ...(user ?? {}) });
  let child: ChildProcess | null = null;
  const ready = async () => {
    try {
      execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const start = async () => {
    if (child) return;
    // After a SIGKILL the old backends take a moment to notice and exit; until they have, a new
    // postmaster refuses to start (shared memory still in use), so try again until the deadline.
    const end = Date.now() + 30_000;
    for (;;) {
      const c = spawn(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'], {
        stdio: 'ignore',
        ...(user ?? {}),
      });
      await until(async () => c.exitCode !== null || c.signalCode !== null || (await ready()), Math.max(1, end - Date.now()), `private postgres on ${port}`, 100);
      if (c.exitCode === null && c.signalCode === null) {
        child = c;
        killOnExit(c);
        return;
      }
      if (Date.now() > end) throw new Error(`private postgres on ${port} did not start`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const kill = async () => {
    const c = child;
    child = null;
    await sigkill(c);
  };
  await start();
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
