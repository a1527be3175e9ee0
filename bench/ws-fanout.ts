/**
 * bench ws-fanout: publish → client latency of liquidity events fanned out by the stream gateway
 * (event log in Redis → gateway → N subscribed clients of one busy contest), against a bare uWS app.publish
 * of the same payloads to the same number of clients (no Redis, no gateway logic), at a load near
 * the raw publisher's capacity.
 *
 * In one run: (1) capacity: the raw server is flooded (events published as fast as the loop can)
 * and the events per second every client receives is its capacity on this machine; (2) both are
 * offered --load × that capacity (default 0.85) at a steady rate, raw first, then the gateway.
 * Latency is publish → client receipt, from a timestamp embedded in each event. Clients run in
 * child processes (--procs, default 2); gateway, baseline server and publisher run here.
 * Targets: gateway p99 ≤ 2 × raw p99 at the same offered load, and each delivers ≥ 99.5 % of what
 * was offered (offered events × clients), so dropping or queueing under load fails the bench.
 *   npm run bench -- ws-fanout [--clients 1000] [--load 0.85] [--rate <events/s, skips the capacity run>]
 *                              [--seconds 10] [--warmup 2] [--procs 2]
 *   npx tsx bench/ws-fanout.ts [same flags]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startGatewayRole } from '../cli/roles/gateway.js';
import { uws } from '../api/gateway/uws.js';
import { createKey } from '../src/store/pg/keys.js';
import { HotState } from '../src/store/redis/hot.js';
import { connectWs, type WsClient } from './support/ws-client.js';
import { benchRuntime, sleep } from './support/stack.js';
import { runIfMain } from './support/main.js';
import { Verdict } from './support/verdict.js';
import { ClientProcess } from './support/client-process.js';

const CONTEST = 'ctst_bench_busy';
const HIST_BUCKET_MS = 0.1;
const HIST_BUCKETS = 20_000; // up to 2 s, then an overflow bucket
const P99_FACTOR = 2;
const MIN_DELIVERED = 0.995;

const nowMs = (): number => performance.timeOrigin + performance.now();

type ToChild =
  | { cmd: 'connect'; url: string; count: number; subscribe: boolean }
  | { cmd: 'window'; from: number; to: number }
  | { cmd: 'stats' }
  | { cmd: 'close' };
type FromChild =
  | { ev: 'ready'; connected: number; ms: number }
  | { ev: 'windowed' }
  | { ev: 'stats'; received: number; inWindow: number; hist: number[]; over: number; max: number }
  | { ev: 'closed' }
  | { ev: 'error'; message: string };

interface RunResult {
  name: string;
  seconds: number;
  published: number;
  clients: number;
  delivered: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU of this process (gateway or baseline server plus the publisher) over the window, % of one core. */
  serverCpu: number;
}

function percentile(hist: number[], over: number, total: number, p: number): number {
  const want = Math.ceil(total * p);
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i]!;
    if (seen >= want) return (i + 1) * HIST_BUCKET_MS;
  }
  return over > 0 ? HIST_BUCKETS * HIST_BUCKET_MS : 0;
}

/** A liquidity.update of realistic size (~0.4 KB) carrying its publish time. */
function liquidityEvent(i: number, sentAt: number): string {
  const entries = [0, 1, 2].map((k) => ({ liquidity_hash: `sim_${k}:${CONTEST}:ml:home:0:p1:ft:${i % 97}`, partner_id: `sim_${k}`, price: 0.45 + k / 100, available: 250 + k }));
  return JSON.stringify({
    type: 'liquidity.update',
    contest_id: CONTEST,
    changed_entries: entries,
    refresh_required: false,
    timestamp: new Date(sentAt).toISOString(),
    sent_at: sentAt,
  });
}

class ClientProc extends ClientProcess<ToChild, FromChild> {}

/** Several client processes driven as one: connect splits the clients, stats are summed. */
class ClientGroup {
  constructor(readonly procs: ClientProc[]) {}
  async connect(url: string, count: number, subscribe: boolean): Promise<{ connected: number; ms: number }> {
    const n = this.procs.length;
    const res = await Promise.all(
      this.procs.map((p, i) => p.request<Extract<FromChild, { ev: 'ready' }>>({ cmd: 'connect', url, count: Math.floor(count / n) + (i < count % n ? 1 : 0), subscribe })),
    );
    return { connected: res.reduce((s, r) => s + r.connected, 0), ms: Math.max(...res.map((r) => r.ms)) };
  }
  async all(msg: ToChild): Promise<void> {
    await Promise.all(this.procs.map((p) => p.request(msg)));
  }
  async stats(): Promise<{ inWindow: number; hist: number[]; over: number; max: number }> {
    const res = await Promise.all(this.procs.map((p) => p.request<Extract<FromChild, { ev: 'stats' }>>({ cmd: 'stats' })));
    const hist = new Array<number>(HIST_BUCKETS).fill(0);
    for (const r of res) for (let i = 0; i < HIST_BUCKETS; i++) hist[i]! += r.hist[i]!;
    return { inWindow: res.reduce((s, r) => s + r.inWindow, 0), hist, over: res.reduce((s, r) => s + r.over, 0), max: Math.max(...res.map((r) => r.max)) };
  }
}

/**
 * Publishes at a steady rate (drift-corrected) for `ms`, returning publish count and window bounds.
 * An infinite rate publishes as fast as the loop can, yielding between events (the flood).
 */
async function publishSteady(rate: number, ms: number, publish: (event: string) => void): Promise<{ count: number; from: number; to: number }> {
  const interval = Number.isFinite(rate) ? 1000 / rate : 0;
  const from = nowMs();
  let count = 0;
  while (nowMs() - from < ms) {
    const due = from + count * interval;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    const t = nowMs();
    publish(liquidityEvent(count, t));
    count++;
    // Yield at least every event so sockets and Redis replies are served between publishes.
    if (wait <= 1) await new Promise((r) => setImmediate(r));
  }
  return { count, from, to: nowMs() };
}

async function measure(
  name: string,
  clients: ClientGroup,
  opts: { url: string; count: number; subscribe: boolean; rate: number; seconds: number; warmup: number },
  publish: (event: string) => void,
): Promise<RunResult> {
  const ready = await clients.connect(opts.url, opts.count, opts.subscribe);
  console.log(`  ${name}: ${ready.connected} clients connected${opts.subscribe ? ' and subscribed' : ''} in ${ready.ms.toFixed(0)} ms`);
  await publishSteady(opts.rate, opts.warmup * 1000, publish);
  await sleep(300);
  await clients.all({ cmd: 'window', from: nowMs(), to: Number.POSITIVE_INFINITY });
  const cpu0 = process.cpuUsage();
  const w = await publishSteady(opts.rate, opts.seconds * 1000, publish);
  const cpu = process.cpuUsage(cpu0);
  await clients.all({ cmd: 'window', from: w.from, to: w.to });
  await sleep(1000); // let in-flight messages land; late ones still count if published in the window
  const st = await clients.stats();
  await clients.all({ cmd: 'close' });
  const seconds = (w.to - w.from) / 1000;
  return {
    name,
    seconds,
    published: w.count,
    clients: ready.connected,
    delivered: st.inWindow,
    p50: percentile(st.hist, st.over, st.inWindow, 0.5),
    p99: percentile(st.hist, st.over, st.inWindow, 0.99),
    max: st.max,
    serverCpu: ((cpu.user + cpu.system) / 1000 / (w.to - w.from)) * 100,
  };
}

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      clients: { type: 'string', default: '1000' },
      load: { type: 'string', default: '0.85' },
      rate: { type: 'string' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      procs: { type: 'string', default: '2' },
    },
  });
  const procs = Math.max(1, Number(values.procs));
  const count = Number(values.clients);
  const loadFactor = Number(values.load);
  const seconds = Number(values.seconds);
  const warmup = Number(values.warmup);

  const { rt, close } = await benchRuntime('wsfanout', { FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: String(count + 10) });
  let gw: Awaited<ReturnType<typeof startGatewayRole>> | null = null;
  let rawListen: unknown = null;
  const children: ChildProcess[] = [];
  try {
    const key = await createKey(rt.pool, rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    // The gateway role as `flow gateway` starts it, on an ephemeral port.
    gw = await startGatewayRole({ ...rt, config: { ...rt.config, streamPort: 0 } });
    const hot = new HotState(rt.redis, rt.ks);

    // Baseline: the same library with nothing in between: subscribe on open, app.publish.
    const raw = uws.App().ws('/raw', {
      compression: uws.DISABLED,
      maxBackpressure: 1024 * 1024,
      idleTimeout: 0,
      open: (ws) => {
        ws.subscribe('bench');
        ws.send('{"type":"connected"}');
      },
    });
    const rawPort = await new Promise<number>((resolve, reject) =>
      raw.listen('127.0.0.1', 0, (ls) => {
        if (!ls) return reject(new Error('baseline server could not listen'));
        rawListen = ls;
        resolve(uws.us_socket_local_port(ls as never));
      }),
    );

    for (let i = 0; i < procs; i++) {
      children.push(spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '__clients'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: process.env }));
    }
    const clients = new ClientGroup(children.map((c) => new ClientProc(c)));
    const rawUrl = `ws://127.0.0.1:${rawPort}/raw`;
    const publishRaw = (e: string) => void raw.publish('bench', e, false);
    const publishLog = (e: string) => void hot.append(CONTEST, [{ channel: 'liquidity', league_id: null, event: e }]);
    console.log(
      `bench ws-fanout: ${count} clients on one contest, ${seconds}s measured (+${warmup}s warm-up) per run; clients in ${procs} process(es) ${children.map((c) => c.pid).join(', ')}`,
    );

    const rows: RunResult[] = [];
    let rate: number;
    if (values.rate) {
      rate = Number(values.rate);
      console.log(`  offered load given: ${rate} events/s (${rate * count} deliveries/s)`);
    } else {
      const cap = await measure('raw uWS flood (capacity)', clients, { count, rate: Number.POSITIVE_INFINITY, seconds, warmup, url: rawUrl, subscribe: false }, publishRaw);
      rows.push(cap);
      const capacity = cap.delivered / cap.clients / cap.seconds;
      rate = Math.max(1, Math.floor(capacity * loadFactor));
      console.log(`  raw capacity ${capacity.toFixed(0)} events/s to each client (${Math.round(capacity * cap.clients)} deliveries/s); offering ${loadFactor} × = ${rate} events/s to both`);
    }

    const opts = { count, rate, seconds, warmup };
    const base = await measure('raw uWS app.publish (baseline)', clients, { ...opts, url: rawUrl, subscribe: false }, publishRaw);
    const flow = await measure(
      'flow gateway via the event log',
      clients,
      { ...opts, url: `ws://127.0.0.1:${gw.port}/flow/v1/stream?api_key=${encodeURIComponent(key.api_key)}`, subscribe: true },
      publishLog,
    );
    rows.push(base, flow);

    const pad = (s: string | number, n: number) => String(s).padStart(n);
    console.log(`\n${'run'.padEnd(34)}${pad('published', 10)}${pad('expected', 11)}${pad('delivered', 11)}${pad('msg/s', 10)}${pad('delivered', 11)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('max ms', 9)}${pad('server cpu', 12)}`);
    for (const r of rows) {
      console.log(
        `${r.name.padEnd(34)}${pad(r.published, 10)}${pad(r.published * r.clients, 11)}${pad(r.delivered, 11)}${pad(Math.round(r.delivered / r.seconds), 10)}${pad((deliveredShare(r) * 100).toFixed(2) + '%', 11)}${pad(r.p50.toFixed(1), 9)}${pad(r.p99.toFixed(1), 9)}${pad(r.max.toFixed(1), 9)}${pad(r.serverCpu.toFixed(0) + '%', 12)}`,
      );
    }
    const ratio = flow.p99 / base.p99;
    console.log(`\nat ${rate} events/s × ${count} clients: p99 gateway ${flow.p99.toFixed(1)} ms, raw ${base.p99.toFixed(1)} ms, ratio ${ratio.toFixed(2)}`);
    const v = new Verdict('bench ws-fanout');
    v.atMost('p99 ratio gateway / raw uWS', ratio, P99_FACTOR, '×');
    v.atLeast('gateway delivered / offered', deliveredShare(flow) * 100, MIN_DELIVERED * 100, '%');
    v.atLeast('raw delivered / offered (load within capacity)', deliveredShare(base) * 100, MIN_DELIVERED * 100, '%');
    v.print();
  } finally {
    for (const c of children) c.kill('SIGTERM');
    if (rawListen) uws.us_listen_socket_close(rawListen as never);
    await gw?.stop();
    // pool.end() resolves before its sockets are closed; the DROP DATABASE ... FORCE in close() can
    // then kill one and the pool re-emits that as an unhandled 'error'. Nothing is running any more.
    rt.pool.on('error', () => undefined);
    await close();
  }
}

/** Deliveries of events published in the window, over events published × clients. */
function deliveredShare(r: RunResult): number {
  const expected = r.published * r.clients;
  return expected ? r.delivered / expected : 0;
}

// ---- client process ------------------------------------------------------------------------

function clientProcess(): void {
  const send = (m: FromChild) => process.send!(m);
  let sockets: WsClient[] = [];
  let hist = new Array<number>(HIST_BUCKETS).fill(0);
  let over = 0;
  let max = 0;
  let received = 0;
  let inWindow = 0;
  let from = Number.POSITIVE_INFINITY;
  let to = Number.POSITIVE_INFINITY;

  const COLON = 0x3a;
  // Events end with ,"sent_at":<ms>} (the bench puts it last): parse it from the tail, no decoding.
  const onPayload = (buf: Buffer) => {
    const i = buf.lastIndexOf(COLON);
    if (i < 0 || buf[buf.length - 1] !== 0x7d || buf[i - 2] !== 0x74) return;
    const sentAt = parseFloat(buf.toString('latin1', i + 1, buf.length - 1));
    if (!Number.isFinite(sentAt)) return;
    const lat = nowMs() - sentAt;
    received++;
    if (sentAt < from || sentAt > to) return;
    inWindow++;
    if (lat > max) max = lat;
    const b = Math.floor(lat / HIST_BUCKET_MS);
    if (b >= HIST_BUCKETS) over++;
    else hist[b < 0 ? 0 : b]!++;
  };

  async function connectAll(url: string, count: number, subscribe: boolean): Promise<number> {
    const batch = 50;
    for (let i = 0; i < count; i += batch) {
      const made = await Promise.all(
        Array.from({ length: Math.min(batch, count - i) }, async () => {
          let greeted: () => void = () => undefined;
          const greeting = new Promise<void>((r) => (greeted = r));
          let subscribed: () => void = () => undefined;
          const acked = new Promise<void>((r) => (subscribed = r));
          const c = await connectWs(url, {
            onPayload: (b) => {
              if (b[9] === 0x63 && b.toString('latin1', 0, 19) === '{"type":"connected"') return greeted();
              if (b[9] === 0x73 && b.toString('latin1', 0, 20) === '{"type":"subscribed"') return subscribed();
              onPayload(b);
            },
          });
          await greeting;
          if (subscribe) {
            c.send({ action: 'subscribe', channel: 'liquidity', contest_ids: [CONTEST] });
            await acked;
          }
          return c;
        }),
      );
      sockets.push(...made);
    }
    return sockets.length;
  }

  process.on('message', (m: ToChild) => {
    void (async () => {
      try {
        if (m.cmd === 'connect') {
          const t0 = nowMs();
          const n = await connectAll(m.url, m.count, m.subscribe);
          hist = new Array<number>(HIST_BUCKETS).fill(0);
          over = max = received = inWindow = 0;
          from = to = Number.POSITIVE_INFINITY;
          send({ ev: 'ready', connected: n, ms: nowMs() - t0 });
        } else if (m.cmd === 'window') {
          if (m.to === Number.POSITIVE_INFINITY || m.to === null) {
            // Open the window: everything published from now on counts.
            hist = new Array<number>(HIST_BUCKETS).fill(0);
            over = max = inWindow = 0;
            from = m.from;
            to = Number.POSITIVE_INFINITY;
          } else {
            from = m.from;
            to = m.to;
          }
          send({ ev: 'windowed' });
        } else if (m.cmd === 'stats') {
          send({ ev: 'stats', received, inWindow, hist, over, max });
        } else if (m.cmd === 'close') {
          await Promise.all(sockets.map((c) => c.close().catch(() => undefined)));
          sockets = [];
          send({ ev: 'closed' });
        }
      } catch (err) {
        send({ ev: 'error', message: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
}

if (process.argv[2] === '__clients') {
  clientProcess();
} else {
  runIfMain(import.meta.url, run);
}
