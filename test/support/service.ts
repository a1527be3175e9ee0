/**
 * Starts the whole service (`cli/flow.ts all` under tsx's loader) as a child process on ephemeral ports with its own
 * database, Redis prefix and data dir, the way an operator runs it. Resolves once it logs 'flow started'.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRedis, deleteByPrefix } from '../../src/store/redis/client.js';
import { flowCommand, ROOT } from './cli.js';
import { dropDatabase, newDataDir, REDIS_URL, removeDataDir, testNames } from './stack.js';

export interface Service {
  child: ChildProcess;
  port: number;
  streamPort: number | null;
  env: Record<string, string>;
  logs: Record<string, unknown>[];
  base: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  cleanup(): Promise<void>;
}

/** A new service's environment: its own database, Redis prefix and (unless the test names one) data dir. */
function freshEnv(extraEnv: Record<string, string>): Record<string, string> {
  const names = testNames();
  return {
    DATABASE_URL: names.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: names.prefix,
    FLOW_DATA_DIR: extraEnv.FLOW_DATA_DIR ?? newDataDir(),
    HOST: '127.0.0.1',
    PORT: '0',
    STREAM_PORT: '0',
    FLOW_ADMIN_TOKEN: 'test-admin',
    FLOW_JWT_SECRET: 'test-jwt-secret',
    FLOW_CURSOR_SECRET: 'test-cursor-secret',
    LOG_LEVEL: 'info',
    // A provider key in the machine's environment must not send the tests' questions to a real provider.
    FLOW_ASK_PROVIDER: 'rule',
    ...extraEnv,
  };
}

export async function startService(extraEnv: Record<string, string> = {}, reuse?: Service): Promise<Service> {
  const env = reuse?.env ?? freshEnv(extraEnv);
  // `flow all` runs every role whatever FLOW_ROLES says; `flow start` honours it.
  const [cmd, argv] = flowCommand([env.FLOW_ROLES ? 'start' : 'all']);
  const child = spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, ...env } });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'flow started') resolve();
      } catch {
        /* not a log line */
      }
    });
    void exited.then((code) => reject(new Error(`service exited with ${code} before starting: ${stderr.slice(-2000)}`)));
    setTimeout(() => reject(new Error(`service did not start within 60 s: ${stderr.slice(-2000)}`)), 60_000).unref();
  });
  // A service that did not start must not outlive the test that started it.
  await started.catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const apiLog = logs.find((l) => l.msg === 'api listening') as { url: string } | undefined;
  // A process without the api role (FLOW_ROLES=compute, say) has no port to report.
  const port = apiLog ? Number(new URL(apiLog.url).port) : 0;
  const gw = logs.find((l) => l.msg === 'stream gateway listening') as { url?: string } | undefined;
  const database = new URL(env.DATABASE_URL!).pathname.slice(1);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode !== null) return child.exitCode;
    child.kill(signal);
    return exited;
  };
  return {
    child,
    port,
    streamPort: gw?.url ? Number(new URL(gw.url.replace(/^ws/, 'http')).port) : null,
    env,
    logs,
    base: `http://127.0.0.1:${port}`,
    stop,
    async cleanup() {
      await stop();
      const redis = createRedis(env.REDIS_URL!);
      await deleteByPrefix(redis, env.REDIS_PREFIX!);
      redis.disconnect();
      await dropDatabase(database);
      removeDataDir(env.FLOW_DATA_DIR!);
    },
  };
}
