/**
 * bench stream-latency: how long a venue quote change takes to reach subscribed stream clients,
 * through the whole service and only its public surfaces: injected with POST /sim/v1/quotes,
 * received as the liquidity.update carrying it on the WebSocket; against a raw uWS server that
 * publishes the same payload bytes to as many clients with app.publish, fed the same schedule.
 *
 * Every role of `flow all` runs in this process (bench/support/flow-all.ts); the simulator is frozen
 * so only injected quotes move. One entry is driven: a position of one open contest quoted by a
 * streaming simulated venue (nothing waits on a poll interval). Change i sets its price to
 * 0.30 + i × 0.00001. An injector process POSTs the changes on a steady schedule without waiting for
 * answers and takes each send time just before its request (bench/support/injector.ts); clients in
 * child processes note the first message carrying each change (bench/support/latency-clients.ts).
 * A change's latency is the first receipt of it or of a later change of the entry, minus its send
 * time: the pipeline computes from the latest venue state, so changes that come faster than it
 * computes are folded into the next (counted, not a loss; bench/support/latency-score.ts). The last
 * change of a round is sent once all others are answered, so it is certainly the state the round
 * ends in (POSTs in flight together may be applied out of order): every client must receive it.
 *
 * The baseline (bench/support/raw-publisher.ts, its own process) is fed by the same injector over
 * HTTP: POST /publish publishes the body verbatim. Both sides pay the same request, so the ratio is
 * what Flow costs between its HTTP input and its clients. The payload is the liquidity.update Flow
 * sent for a probe change of that entry, with each change's price in place.
 *
 * For each client count (both sides' clients stay connected) and for --rate and --multiplier × --rate,
 * the sides take turns in --rounds rounds, alternating which goes first, so a disturbance from
 * outside (other work on the machine) falls on both alike; each side's rounds are pooled.
 * Targets: Flow p99 ≤ 2 × the baseline p99 at --rate, for each client count, with the baseline
 * keeping up (its p50 ≤ 100 ms: a saturated baseline would let any ratio pass); in every run no
 * (client, change) pair lost by Flow (a client missing a change the others received, or receiving
 * neither it nor a later one) and none missed by the baseline; no injection refused. The higher
 * rate's ratio is reported, not judged. Flow's rows also give Redis' input per change (INFO stats
 * over its rounds, the recomputations of other contests at rest included): what each change costs
 * in writes, not judged. --discard-check makes one client per process ignore every
 * 50th change: the loss targets then FAIL, which shows they can.
 *   npm run bench -- stream-latency [--clients 200,1000] [--rate 50] [--multiplier 10] [--seconds 10]
 *                                   [--rounds 5] [--warmup 1] [--procs 2] [--contest <id>] [--partner <sim venue>] [--discard-check]
 */
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createKey } from '../src/store/pg/keys.js';
import { connectWs } from './support/ws-client.js';
import { startFlowAll, type FlowAll } from './support/flow-all.js';
import { Injector, type Injection } from './support/injector.js';
import { LatencyClients } from './support/latency-clients.js';
import { appendScores, foldedChanges, lostPairs, percentile, type Score, type Track } from './support/latency-score.js';
import { runIfMain } from './support/main.js';
import { spawnRawPublisher, type RawPublisher } from './support/raw-publisher.js';
import { sleep } from './support/stack.js';
import { Verdict } from './support/verdict.js';

const P99_FACTOR = 2;
const STEP = 0.00001;
const MEASURED_BASE = 0.3;
const WARMUP_BASE = 0.7;
const MAX_CHANGES = 39_000; // measured prices stay below the warm-up band, 0.70 and up
const DISCARD_EVERY = 50;
/** How long a round waits after its last change for late deliveries (they still count). */
const DRAIN_MS = 1500;
/** A bare app.publish to local clients with a median this slow is queueing, not publishing. */
const SATURATED_P50_MS = 100;
const PROBE_PRICE = 0.25;
const AVAILABLE = 1000;

const priceOf = (base: number, i: number) => Number((base + i * STEP).toFixed(5));

interface Target {
  contestId: string;
  partnerId: string;
  positionHash: string;
  liquidityHash: string;
  positions: number;
}

interface Row {
  side: 'flow' | 'raw';
  clients: number;
  rate: number;
  changes: number;
  injectFailed: number;
  score: Score;
  p50: number;
  p99: number;
  /** CPU of the serving process (Flow: this one; raw: the publisher's) over the window, % of one core. */
  cpu: number;
  /** The longest event-loop stall of this (Flow's) process during the window and drain. */
  loopMaxMs: number;
}

async function getJson<T>(url: string, headers: Record<string, string>, init: RequestInit = {}): Promise<T> {
  const r = await fetch(url, { ...init, headers: { ...headers, ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  const body = await r.text();
  if (!r.ok) throw new Error(`${init.method ?? 'GET'} ${url} answered ${r.status}: ${body.slice(0, 300)}`);
  return (JSON.parse(body) as { data: T }).data;
}

/**
 * The first open contest (in the catalog's order, or --contest) with a position quoted by a
 * streaming venue, and that entry; each contest's liquidity is awaited until the pipeline has
 * computed it, so the choice does not depend on how fast the start-up was.
 */
async function pickTarget(flow: FlowAll, apiKey: string, want: { contest?: string; partner?: string }): Promise<Target> {
  const admin = { 'x-admin-token': flow.adminToken };
  const auth = { 'x-api-key': apiKey };
  const state = await getJson<{ venues: { partner_id: string; quote_source: string | null }[] }>(`${flow.apiUrl}/sim/v1/state`, admin);
  const streaming = state.venues.filter((v) => v.quote_source === 'streaming').map((v) => v.partner_id);
  if (want.partner && !streaming.includes(want.partner)) throw new Error(`--partner ${want.partner} is not a streaming simulated venue (${streaming.join(', ')})`);
  const partners = want.partner ? [want.partner] : streaming;
  const contests = want.contest ? [want.contest] : (await getJson<{ id: string }[]>(`${flow.apiUrl}/flow/v1/contests?status=open&limit=100`, auth)).map((c) => c.id);
  type Pos = { position_hash: string; partner_liquidities: { partner_id: string; liquidity_hash: string }[] };
  const deadline = Date.now() + 30_000;
  for (const id of contests) {
    let positions: Pos[] = [];
    while (positions.length === 0 && Date.now() < deadline) {
      positions = await getJson<Pos[]>(`${flow.apiUrl}/flow/v1/contests/${encodeURIComponent(id)}/liquidity`, auth);
      if (positions.length === 0) await sleep(200);
    }
    for (const p of positions) {
      const q = p.partner_liquidities.find((l) => partners.includes(l.partner_id));
      if (q) return { contestId: id, partnerId: q.partner_id, positionHash: p.position_hash, liquidityHash: q.liquidity_hash, positions: positions.length };
    }
  }
  throw new Error(`no open contest${want.contest ? ` ${want.contest}` : ''} has a position quoted by ${partners.join(' or ')}`);
}

/** Flow's liquidity.update for one probe change of the entry, split around that entry's price. */
async function probeTemplate(flow: FlowAll, apiKey: string, t: Target): Promise<{ pre: string; post: string }> {
  const c = await connectWs(`${flow.streamUrl}?api_key=${encodeURIComponent(apiKey)}`);
  try {
    await c.next((m) => m?.type === 'connected');
    await c.request({ action: 'subscribe', channel: 'liquidity', contest_ids: [t.contestId] });
    await getJson(`${flow.apiUrl}/sim/v1/quotes`, { 'x-admin-token': flow.adminToken }, {
      method: 'POST',
      body: JSON.stringify({ partner_id: t.partnerId, position_hash: t.positionHash, price: PROBE_PRICE, available: AVAILABLE }),
    });
    await c.next(
      (m) => m?.type === 'liquidity.update' && m.changed_entries.some((e: { liquidity_hash: string; price: number }) => e.liquidity_hash === t.liquidityHash && e.price === PROBE_PRICE),
      10_000,
    );
    const text = c.texts.find((s) => s.includes(JSON.stringify(t.liquidityHash)) && s.includes(`"price":${PROBE_PRICE}`))!;
    const at = text.indexOf(JSON.stringify(t.liquidityHash));
    const p = text.indexOf(`"price":${PROBE_PRICE}`, text.lastIndexOf('{', at)) + '"price":'.length;
    return { pre: text.slice(0, p), post: text.slice(p + String(PROBE_PRICE).length) };
  } finally {
    await c.close();
  }
}

interface Side {
  side: 'flow' | 'raw';
  /** Where the clients connect. */
  url: string;
  /** The contest the clients subscribe to (null: the server subscribes them on open). */
  contestId: string | null;
  postUrl: string;
  headers: Record<string, string>;
  /** Each change's body is pre + price + post. */
  pre: string;
  post: string;
  /** CPU time of the process serving this side so far, µs. */
  cpuMicros(): Promise<number>;
  /** Bytes Redis has received so far (INFO stats), for the side that writes to it. */
  redisInBytes?(): Promise<number>;
}

interface Run {
  count: number;
  rate: number;
  /** Measured changes per side, split over the rounds. */
  seconds: number;
  rounds: number;
  warmup: number;
  liquidityHash: string;
  discardEvery: number;
}

/** A side with its clients connected, and its figures accumulated over the rounds. */
interface Live {
  side: Side;
  clients: LatencyClients;
  score: Score | null;
  changes: number;
  injectFailed: number;
  cpuMicros: number;
  windowMs: number;
  loopMaxMs: number;
  redisBytes: number;
}

const band = (liquidityHash: string, base: number, count: number): Track => ({ liquidityHash, base, step: STEP, count });

function job(s: Side, base: number, count: number, rate: number, lastAfterAnswers = false): Injection {
  return { url: s.postUrl, headers: s.headers, pre: s.pre, post: s.post, prices: Array.from({ length: count }, (_, i) => priceOf(base, i)), rate, lastAfterAnswers };
}

async function warmUp(injector: Injector, l: Live, o: Run): Promise<void> {
  const n = Math.max(1, Math.round(o.rate * o.warmup));
  await l.clients.track(band(o.liquidityHash, WARMUP_BASE, n));
  const warm = await injector.inject(job(l.side, WARMUP_BASE, n, o.rate));
  if (warm.failed) throw new Error(`${l.side.side}: ${warm.failed} warm-up injections failed, first: ${warm.firstError}`);
  await sleep(500);
}

/**
 * One round of one side: inject n changes from base, wait for late deliveries, add the figures up.
 * The last change goes out once the others are answered, so it is the state the round ends in:
 * every client must receive it, and it stands for any change overtaken by an earlier one in flight.
 */
async function round(injector: Injector, l: Live, o: Run, base: number, n: number): Promise<void> {
  await l.clients.track(band(o.liquidityHash, base, n), o.discardEvery);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = await l.side.cpuMicros();
  const in0 = (await l.side.redisInBytes?.()) ?? 0;
  const run = await injector.inject(job(l.side, base, n, o.rate, true));
  l.cpuMicros += (await l.side.cpuMicros()) - cpu0;
  l.redisBytes += ((await l.side.redisInBytes?.()) ?? 0) - in0;
  l.windowMs += run.sent.length ? run.sent[run.sent.length - 1]! - run.sent[0]! + 1000 / o.rate : 0;
  await sleep(DRAIN_MS);
  loop.disable();
  l.loopMaxMs = Math.max(l.loopMaxMs, loop.max / 1e6);
  if (run.failed) console.error(`  ${l.side.side}: ${run.failed} injections failed, first: ${run.firstError}`);
  l.injectFailed += run.failed;
  l.changes += n;
  const score = await l.clients.score(run.sent);
  l.score = l.score ? appendScores(l.score, score) : score;
}

/**
 * Both sides at one client count and rate, in rounds that alternate which side goes first, so a
 * disturbance from outside the bench (other work on the machine) falls on both alike.
 */
async function measure(injector: Injector, sides: [Live, Live], o: Run): Promise<Row[]> {
  const n = Math.max(1, Math.round((o.rate * o.seconds) / o.rounds));
  if (n * o.rounds > MAX_CHANGES) throw new Error(`at most ${MAX_CHANGES} changes per side and rate: lower --seconds or the rates`);
  for (const l of sides) {
    Object.assign(l, { score: null, changes: 0, injectFailed: 0, cpuMicros: 0, windowMs: 0, loopMaxMs: 0, redisBytes: 0 });
    await warmUp(injector, l, o);
  }
  for (let i = 0; i < o.rounds; i++) {
    // A band of prices per round: a late message of an earlier round cannot pass for this one's.
    const base = MEASURED_BASE + i * n * STEP;
    for (const l of i % 2 === 0 ? sides : [...sides].reverse()) await round(injector, l, o, base, n);
  }
  return sides.map((l) => {
    const score = l.score!;
    const row: Row = {
      side: l.side.side,
      clients: score.clients,
      rate: o.rate,
      changes: l.changes,
      injectFailed: l.injectFailed,
      score,
      p50: percentile(score, 0.5),
      p99: percentile(score, 0.99),
      cpu: l.windowMs ? (l.cpuMicros / 1000 / l.windowMs) * 100 : 0,
      loopMaxMs: l.loopMaxMs,
    };
    console.log(
      `  ${row.side.padEnd(4)} ${String(o.count).padStart(5)} clients ${String(o.rate).padStart(4)}/s: p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, max ${score.max.toFixed(1)} ms, ` +
        `received ${score.exact}/${row.changes * row.clients}, folded ${foldedChanges(score)}, lost ${lostPairs(score)}` +
        (row.side === 'flow' ? `, longest event-loop stall here ${row.loopMaxMs.toFixed(0)} ms, Redis input ${(l.redisBytes / 1024 / l.changes).toFixed(1)} KB a change (recomputations at rest included)` : ''),
    );
    return row;
  });
}

const saturated = (r: Row) => r.side === 'raw' && r.p50 > SATURATED_P50_MS;

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      clients: { type: 'string', default: '200,1000' },
      rate: { type: 'string', default: '50' },
      multiplier: { type: 'string', default: '10' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      procs: { type: 'string', default: '2' },
      contest: { type: 'string' },
      partner: { type: 'string' },
      'discard-check': { type: 'boolean', default: false },
    },
  });
  const counts = values.clients.split(',').map(Number);
  const rate = Number(values.rate);
  const rates = [rate, rate * Number(values.multiplier)].filter((r, i, a) => a.indexOf(r) === i);
  const seconds = Number(values.seconds);
  const warmup = Number(values.warmup);
  const rounds = Number(values.rounds);
  const procs = Math.max(1, Number(values.procs));
  if (!counts.every((c) => Number.isInteger(c) && c > 0) || !rates.every((r) => r > 0) || !(seconds > 0) || !(warmup >= 0) || !(Number.isInteger(rounds) && rounds > 0)) {
    throw new Error('--clients takes positive integers (comma-separated), --rounds a positive integer; --rate, --multiplier and --seconds positive numbers');
  }

  const loadAtStart = loadavg()[0]!;
  const flow = await startFlowAll('streamlat', { FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: String(Math.max(...counts) + 10) });
  let raw: RawPublisher | null = null;
  const groups: LatencyClients[] = [];
  let injector: Injector | null = null;
  try {
    const key = await createKey(flow.rt.pool, flow.rt.gate, { plan: 'free', keyType: 'data', environment: 'test' });
    await getJson(`${flow.apiUrl}/sim/v1/freeze`, { 'x-admin-token': flow.adminToken }, { method: 'POST', body: JSON.stringify({ frozen: true }) });
    const target = await pickTarget(flow, key.api_key, { contest: values.contest, partner: values.partner });
    const template = await probeTemplate(flow, key.api_key, target);
    raw = await spawnRawPublisher();
    // One group of client processes per side: both stay connected while the rounds alternate.
    groups.push(LatencyClients.spawn(procs), LatencyClients.spawn(procs));
    injector = Injector.spawn();
    console.log(
      `bench stream-latency: POST /sim/v1/quotes → liquidity.update on ${target.contestId} (${target.positions} positions), entry ${target.liquidityHash} (${target.partnerId}, streaming); ` +
        `${seconds}s measured per side and rate in ${rounds} alternating rounds (+${warmup}s warm-up); client processes ${groups.flatMap((g) => g.pids).join(', ')}, injector ${injector.pid}; baseline payload ${Buffer.byteLength(template.pre + String(priceOf(MEASURED_BASE, 1)) + template.post)} bytes`,
    );

    const flowSide: Side = {
      side: 'flow',
      url: `${flow.streamUrl}?api_key=${encodeURIComponent(key.api_key)}`,
      contestId: target.contestId,
      postUrl: `${flow.apiUrl}/sim/v1/quotes`,
      headers: { 'content-type': 'application/json', 'x-admin-token': flow.adminToken },
      pre: `${JSON.stringify({ partner_id: target.partnerId, position_hash: target.positionHash }).slice(0, -1)},"price":`,
      post: `,"available":${AVAILABLE}}`,
      async cpuMicros() {
        const c = process.cpuUsage();
        return c.user + c.system;
      },
      async redisInBytes() {
        return Number(/total_net_input_bytes:(\d+)/.exec(await flow.rt.redis.info('stats'))?.[1] ?? 0);
      },
    };
    const rawSide: Side = {
      side: 'raw',
      url: raw.url,
      contestId: null,
      postUrl: raw.publishUrl,
      headers: { 'content-type': 'application/json', 'x-admin-token': flow.adminToken },
      pre: template.pre,
      post: template.post,
      cpuMicros: () => raw!.cpuMicros(),
    };

    const rows: Row[] = [];
    for (const count of counts) {
      const live = ([rawSide, flowSide] as const).map((side, k): Live => ({ side, clients: groups[k]!, score: null, changes: 0, injectFailed: 0, cpuMicros: 0, windowMs: 0, loopMaxMs: 0, redisBytes: 0 }));
      for (const l of live) {
        const ready = await l.clients.connect(l.side.url, count, l.side.contestId);
        if (ready.connected !== count) throw new Error(`${l.side.side}: ${ready.connected} of ${count} clients connected`);
        console.log(`  ${l.side.side}: ${count} clients connected${l.side.contestId ? ' and subscribed' : ''} in ${ready.ms.toFixed(0)} ms`);
      }
      for (const r of rates) {
        const o: Run = { count, rate: r, seconds, rounds, warmup, liquidityHash: target.liquidityHash, discardEvery: values['discard-check'] ? DISCARD_EVERY : 0 };
        rows.push(...(await measure(injector, [live[0]!, live[1]!], o)));
      }
      for (const l of live) await l.clients.close();
    }

    const pad = (s: string | number, n: number) => String(s).padStart(n);
    console.log(
      `\n${'side'.padEnd(6)}${pad('clients', 8)}${pad('rate/s', 8)}${pad('changes', 9)}${pad('folded', 8)}${pad('expected', 10)}${pad('received', 10)}${pad('lost', 7)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('max ms', 9)}${pad('cpu', 7)}${pad('p99 ratio', 11)}`,
    );
    for (const row of rows) {
      const base = rows.find((b) => b.side === 'raw' && b.clients === row.clients && b.rate === row.rate)!;
      console.log(
        `${row.side.padEnd(6)}${pad(row.clients, 8)}${pad(row.rate, 8)}${pad(row.changes, 9)}${pad(foldedChanges(row.score), 8)}${pad(row.changes * row.clients, 10)}${pad(row.score.exact, 10)}${pad(lostPairs(row.score), 7)}` +
          `${pad(row.p50.toFixed(1), 9)}${pad(row.p99.toFixed(1), 9)}${pad(row.score.max.toFixed(1), 9)}${pad(row.cpu.toFixed(0) + '%', 7)}${pad(row.side === 'flow' ? (row.p99 / base.p99).toFixed(2) + '×' : saturated(row) ? 'saturated' : '', 11)}`,
      );
    }
    // Every process of the bench shares the machine with whatever else runs: say how busy it was.
    console.log(`  machine: ${availableParallelism()} cores, 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end`);
    if (rows.some(saturated)) {
      console.log(`  saturated: the baseline's median exceeded ${SATURATED_P50_MS} ms, so its publisher or its clients fell behind the schedule on this machine; Flow's ratio against it means nothing there`);
    }

    const v = new Verdict('bench stream-latency');
    for (const count of counts) {
      for (const r of rates) {
        const f = rows.find((x) => x.side === 'flow' && x.clients === count && x.rate === r)!;
        const b = rows.find((x) => x.side === 'raw' && x.clients === count && x.rate === r)!;
        if (r === rate) {
          v.atMost(`p99 flow / raw, ${count} clients, ${r}/s`, f.p99 / b.p99, P99_FACTOR, '×');
          // A saturated baseline would make any ratio pass.
          v.atMost(`raw p50 (the baseline keeps up), ${count} clients, ${r}/s`, b.p50, SATURATED_P50_MS, 'ms');
        }
        v.atMost(`flow: (client, change) pairs lost, ${count} clients, ${r}/s`, lostPairs(f.score), 0);
        // The baseline publishes every change: anything short of all means its clients could not keep up.
        v.atMost(`raw: (client, change) pairs not received, ${count} clients, ${r}/s`, b.changes * b.clients - b.score.exact, 0);
      }
    }
    v.atMost('injections refused or failed', rows.reduce((s, x) => s + x.injectFailed, 0), 0);
    v.print();
  } finally {
    for (const g of groups) g.kill();
    injector?.kill();
    raw?.close();
    await flow.close();
  }
}

runIfMain(import.meta.url, run);
