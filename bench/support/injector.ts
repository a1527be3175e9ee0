/**
 * The change injector of bench/stream-latency.ts, in a process of its own (the outside world): it
 * POSTs `pre + price_i + post` at from + i / rate on keep-alive connections (Node's fetch), never
 * waiting for an answer before the next is due (the last one excepted, on request), and reports
 * each send time (nowMs clock, taken just before the request) and the requests that failed or were
 * refused.
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
  /**
   * Send the last body only once every other has been answered, so it is certainly applied last:
   * requests in flight together on several connections may be applied out of order, and a
   * change overtaken that way would otherwise look lost (the state the service ends in is an
   * earlier one).
   */
  lastAfterAnswers?: boolean;
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
  const post = (body: string) => {
    sent.push(nowMs());
    return fetch(job.url, { method: 'POST', headers: job.headers, body }).then(
      async (r) => {
        const text = await r.text();
        if (!r.ok) fail(`HTTP ${r.status}: ${text.slice(0, 200)}`);
      },
      (err: unknown) => fail(String(err)),
    );
  };
  const scheduled = job.lastAfterAnswers ? bodies.length - 1 : bodies.length;
  const from = nowMs();
  for (let i = 0; i < scheduled; i++) {
    const wait = from + i * interval - nowMs();
    if (wait > 1) await sleep(wait);
    answers.push(post(bodies[i]!));
    // Behind schedule: still let answers be read between sends.
    if (wait <= 1) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(answers);
  if (scheduled < bodies.length) {
    await sleep(Math.max(0, from + scheduled * interval - nowMs()));
    await post(bodies[scheduled]!);
  }
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
