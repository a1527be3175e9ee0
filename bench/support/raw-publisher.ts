/**
 * The baseline of bench/stream-latency.ts, in a process of its own so the service's background work
 * (timers, history inserts) does not stall it: a bare uWS app whose WebSocket clients are
 * subscribed to one topic on open, and POST /publish publishes its body to that topic verbatim with
 * app.publish. GET /cpu answers this process's CPU time in µs. Prints {"port": n} on stdout once
 * listening, then serves until killed.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { uws, type HttpResponse, type TemplatedApp } from '../../api/gateway/uws.js';
import { isMain } from './main.js';

const TOPIC = 'bench';

export interface RawPublisher {
  /** ws:// URL the clients connect to. */
  url: string;
  /** http:// URL to POST each payload to. */
  publishUrl: string;
  /** CPU time of the publisher process so far, µs. */
  cpuMicros(): Promise<number>;
  close(): void;
}

export async function spawnRawPublisher(): Promise<RawPublisher> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => [null])])) as [string | null];
  if (!first) throw new Error('the baseline publisher exited before listening');
  const { port } = JSON.parse(first) as { port: number };
  return {
    url: `ws://127.0.0.1:${port}/raw`,
    publishUrl: `http://127.0.0.1:${port}/publish`,
    async cpuMicros() {
      const r = await fetch(`http://127.0.0.1:${port}/cpu`);
      return Number(await r.text());
    },
    close: () => void child.kill('SIGTERM'),
  };
}

function serve(): void {
  const app: TemplatedApp = uws
    .App()
    .ws('/raw', {
      compression: uws.DISABLED,
      maxBackpressure: 1024 * 1024,
      closeOnBackpressureLimit: false,
      idleTimeout: 0,
      open: (ws) => {
        ws.subscribe(TOPIC);
        ws.send('{"type":"connected"}');
      },
    })
    .post('/publish', (res: HttpResponse) => {
      let aborted = false;
      const chunks: Buffer[] = [];
      res.onAborted(() => (aborted = true));
      res.onData((ab, isLast) => {
        chunks.push(Buffer.from(ab.slice(0)));
        if (!isLast) return;
        app.publish(TOPIC, Buffer.concat(chunks), false);
        if (!aborted) res.cork(() => res.writeHeader('content-type', 'application/json').end('{"data":{}}'));
      });
    })
    .get('/cpu', (res: HttpResponse) => {
      const cpu = process.cpuUsage();
      res.cork(() => res.end(String(cpu.user + cpu.system)));
    });
  app.listen('127.0.0.1', 0, (ls) => {
    if (!ls) {
      console.error('baseline publisher: could not listen');
      process.exit(1);
    }
    process.stdout.write(JSON.stringify({ port: uws.us_socket_local_port(ls as never) }) + '\n');
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (isMain(import.meta.url)) serve();
