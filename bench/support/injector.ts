/**
 * The change injector of bench/stream-latency.ts, in a process of its own (the outside world): it
 * POSTs `pre + price_i + post` at from + i / rate on keep-alive connections (Node's fetch), never
 * waiting for an answer before the next is due, and reports each send time (nowMs clock, taken
 * just before the request) and the requests that failed or were refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nowMs } from './latency-clients.js';
import { isMain } from './main.js';
import { sleep } from './stack.js';

export interface Injection {
  url: string;
  headers: Record<string, string>;
  /** Body i is pre + String(prices[i]) + post. */
  pre: string;
  post: string;
  prices: number[];
  rate: number;
}

export interface Injected {
  sent: number[];
  failed: number;
  firstError: string | null;
}

export class Injector {
  private constructor(private readonly child: ChildProcess) {}

  static spawn(): Injector {
    return new Injector(spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  inject(job: Injection): Promise<Injected> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`injector exited with ${code}`));
      this.child.once('exit', onExit);
      this.child.once('message', (m: Injected) => {
        this.child.off('exit', onExit);
        resolve(m);
      });
      this.child.send(job);
    });
  }

  kill(): void {
    this.child.kill('SIGTERM');
  }
}

async function run(job: Injection): Promise<Injected> {
  const bodies = job.prices.map((p) => job.pre + String(p) + job.post);
  const interval = 1000 / job.rate;
  const sent: number[] = [];
  const answers: Promise<void>[] = [];
  let failed = 0;
  let firstError: string | null = null;
  const fail = (why: string) => {
    failed++;
    firstError ??= why;
  };
  const from = nowMs();
  for (let i = 0; i < bodies.length; i++) {
    const wait = from + i * interval - nowMs();
    if (wait > 1) await sleep(wait);
    sent.push(nowMs());
    answers.push(
      fetch(job.url, { method: 'POST', headers: job.headers, body: bodies[i] }).then(
        async (r) => {
          const text = await r.text();
          if (!r.ok) fail(`HTTP ${r.status}: ${text.slice(0, 200)}`);
        },
        (err: unknown) => fail(String(err)),
      ),
    );
    // Behind schedule: still let answers be read between sends.
    if (wait <= 1) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(answers);
  return { sent, failed, firstError };
}

if (isMain(import.meta.url)) {
  process.on('message', (job: Injection) => {
    run(job).then(
      (r) => process.send!(r),
      (err: unknown) => process.send!({ sent: [], failed: job.prices.length, firstError: String(err) } satisfies Injected),
    );
  });
}
