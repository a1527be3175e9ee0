/**
 * bench orders (issue 11): single-leg paper buys (POST /flow/v1/auth/orders/buy) from --accounts
 * accounts, each an execution key of its own workspace with a topped-up wallet, over real HTTP
 * (the API in a child process fed live quotes by the simulator through the pipeline,
 * bench/support/orders-server.ts); each buy a fresh Idempotency-Key, a random position with a live
 * price and a random amount of 1.00-2.00 ATLAS. The baseline: raw BullMQ add-and-process round
 * trips whose job is the buy's PostgreSQL writes, captured from the route and replayed raw (a
 * transaction's frame and writes, or the one-statement buy's statement and the relay wake-up after
 * it; bench/support/raw-queue.ts, raw-buy.ts); its settings (worker placement, concurrency,
 * statements named or not) are swept in the run and the fastest is the baseline.
 *
 * Two loads, both for both sides, in --rounds rounds that alternate which side goes first (this
 * machine's throughput drifts between runs):
 * - closed: --connections loops (loop i buys for account i mod accounts), each sending its next
 *   buy once the last answered: legs/s at saturation, and p50/p99 at that load;
 * - paced: --rate buys a second (the throughput target) started on schedule whether or not the
 *   earlier ones answered, latency from each one's scheduled start: p50/p99 at a stated load. (A
 *   closed loop's mean latency is its concurrency over its throughput: 100 loops at 1,000 legs/s
 *   wait 100 ms on average, so a p99 target can only be judged at a stated rate.)
 * Figures are the medians over the rounds; the ratio is the median of the per-round flow / raw
 * legs/s ratios. The CPU each process used per leg is printed (the bench's PostgreSQL backends
 * apart from the rest of the machine, which other work on a shared machine inflates), and what one
 * buy sends to PostgreSQL and Redis (recorded from a served buy). The HTTP floor (the same client,
 * body and loops against a bare Fastify route in the server's process) is measured once and
 * printed: what the HTTP hop alone costs here.
 * Targets (issue 11): Flow ≥ 1,000 legs/s (closed loops); Flow p99 ≤ 50 ms at --rate; every Flow
 * buy answered 200 with its leg completed at the amount asked, every raw job committed; and
 * afterwards, per account: the ledger adds up (sum = last balance_after, seq 1..n, one opening
 * entry), its bet_debit entries, its orders (and the debits naming them) and their stakes equal the
 * legs answered, with as many orders events, order_hold balance events and orders.buy
 * Idempotency-Key records. The ratio is printed, not judged (the issue sets absolute targets, and
 * the baseline is another shape of the work: a queue hop instead of HTTP, no reads).
 * No request is abandoned at a deadline, so every buy that landed was answered and counted.
 * --tamper-check writes one stray ledger entry before the checks: they must then FAIL.
 * BENCH_SERVER_NODE_ARGS (environment): extra node flags for the server process, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile of the API under this load (node refuses
 * --cpu-prof in NODE_OPTIONS).
 *   npm run bench -- orders [--seconds 10] [--rounds 3] [--connections 100] [--accounts 100] [--rate 1000]
 *                           [--sweep-seconds 3] [--warmup 2] [--tamper-check]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createPool } from '../src/store/pg/pool.js';
import { printTable } from './support/autocannon.js';
import { drive, pace, type DriveResult, type Outcome } from './support/closed-loop.js';
import { CpuMeter, processCpuMs } from './support/cpu.js';
import { postJson } from './support/http-post.js';
import { runIfMain } from './support/main.js';
import { checkOrders } from './support/orders-ledgers.js';
import type { OrdersServerInfo } from './support/orders-server.js';
import { BUY_PATH, buyBody } from './support/raw-buy.js';
import { queueSettings, RawQueue, type QueueSettings } from './support/raw-queue.js';
import { Verdict } from './support/verdict.js';
import { AmountTally, tamperLedger } from './support/wallet-ledgers.js';

const LEGS_PER_SECOND_TARGET = 1000;
const P99_TARGET_MS = 50;

interface Leg {
  status: string;
  filled_notional: number;
  rejected_code: string | null;
  venues: { router_order_id: string | null }[];
}

/** A run and where its CPU went, in ms per leg answered. */
interface Measured extends DriveResult {
  side: 'flow' | 'raw';
  load: 'closed' | 'paced';
  cpu: { bench: number; server: number; pg: number; rest: number };
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '100' },
      accounts: { type: 'string', default: '100' },
      rate: { type: 'string', default: String(LEGS_PER_SECOND_TARGET) },
      'sweep-seconds': { type: 'string', default: '3' },
      warmup: { type: 'string', default: '2' },
      'tamper-check': { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const accountCount = Number(values.accounts);
  const rate = Number(values.rate);
  const sweepSeconds = Number(values['sweep-seconds']);
  const warmup = Number(values.warmup);
  if (![seconds, rate, sweepSeconds].every((x) => x > 0) || !(warmup >= 0) || ![rounds, connections, accountCount].every((x) => Number.isInteger(x) && x > 0)) {
    throw new Error('--seconds, --rate and --sweep-seconds take positive numbers, --warmup 0 or more; --rounds, --connections and --accounts positive integers');
  }

  const loadAtStart = loadavg()[0]!;
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', new URL('./support/orders-server.ts', import.meta.url).pathname, String(accountCount)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const closers: (() => Promise<void>)[] = [];
  // Paced runs may have more buys in flight than there are loops, should Flow fall behind.
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(connections, 1000) });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    });
    const info = JSON.parse(line) as OrdersServerInfo;
    const { accounts, targets, capture } = info;
    const accountOf = (worker: number) => accounts[worker % accounts.length]!;
    const framed = capture.statements.some((s) => /^BEGIN$/i.test(s.text));
    const inTransaction = capture.statements.filter((s) => !/^(BEGIN|COMMIT)$/i.test(s.text)).length;
    console.log(
      `bench orders: ${accounts.length} accounts (execution keys, one workspace each), ${connections} closed loops, paced at ${rate} buys/s, ${seconds}s per run, ${rounds} rounds; ` +
        `single-leg paper buys of 0.01-1.00 ATLAS over ${targets.length} positions with a live price in ${info.contests.count} open contests ` +
        `(a leg reads its contest's liquidity document: median ${(info.contests.liquidity_bytes_median / 1024).toFixed(1)} KiB, max ${(info.contests.liquidity_bytes_max / 1024).toFixed(1)} KiB); ` +
        `raw pool ${info.pool_max} connections as the service's; server in pid ${child.pid}`,
    );
    console.log(
      `one paper buy sends ${capture.statements.length} statements to PostgreSQL (${framed ? `${inTransaction} in its transaction, between BEGIN and COMMIT` : 'no transaction block'}) and ${capture.redis.length} commands to Redis (${capture.redis.join(', ')}); ` +
        `the baseline replays ${framed ? `the frame and the ${capture.replayed.length - 2} that write` : `the ${capture.replayed.length} that write`}:`,
    );
    capture.statements.forEach((s, i) => console.log(`  ${capture.replayed.includes(i) ? 'raw' : '   '} ${String(i + 1).padStart(2)}. ${s.text.replace(/\s+/g, ' ').slice(0, 110)}`));

    const legs = new AmountTally();
    const flowOp = async (worker: number): Promise<Outcome> => {
      const { api_key, router_account_id } = accountOf(worker);
      // 1.00-2.00 ATLAS: the practice book takes orders from 1 (its min_order_amount), on a cent increment.
      const cents = 100 + Math.floor(Math.random() * 101);
      const target = targets[Math.floor(Math.random() * targets.length)]!;
      const r = await postJson(agent, info.port, BUY_PATH, { 'x-api-key': api_key, 'idempotency-key': randomUUID() }, buyBody(target, cents));
      if (r.status !== 200) return { ok: false, refusal: `${r.status} ${r.body.slice(0, 300)}` };
      const leg = (JSON.parse(r.body) as { data?: { results?: Leg[] } }).data?.results?.[0];
      if (leg?.status !== 'completed') return { ok: false, refusal: `200-${leg?.status ?? 'no-leg'}-${leg?.rejected_code ?? ''} ${r.body.slice(0, 300)}` };
      if (leg.filled_notional !== cents / 100 || !leg.venues[0]?.router_order_id) return { ok: false, refusal: `200-completed-with-another-amount ${r.body.slice(0, 300)}` };
      legs.add(router_account_id, cents);
      return { ok: true };
    };
    const rawOp = (q: RawQueue) => async (worker: number): Promise<Outcome> => {
      const account = accountOf(worker).router_account_id;
      const out = await q.roundTrip(account);
      if (out.ok) legs.add(account, capture.cents);
      return out;
    };

    const checkPool = createPool(info.database_url, 2);
    closers.push(() => checkPool.end());
    /** The PostgreSQL backends serving the bench's database (each side's pool, the checks' own apart): its share of PostgreSQL's CPU, whatever else the machine runs. */
    const backends = async () =>
      (await checkPool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);

    const all: Measured[] = [];
    /** Runs one load against one side and notes where the CPU went. */
    const measure = async (side: 'flow' | 'raw', load: 'closed' | 'paced', name: string, s: number, op: (w: number) => Promise<Outcome>, workerPid: number | null = null) => {
      const before = await backends();
      const meter = new CpuMeter({ server: side === 'flow' ? child.pid! : (workerPid ?? -1), bench: process.pid, pg: before });
      const r = load === 'closed' ? await drive(name, connections, s, op) : await pace(name, accounts.length, rate, s, op);
      const used = meter.since();
      // A pool may have opened connections during the run: all their backends' CPU is the run's.
      const opened = (await backends()).filter((p) => !before.includes(p));
      used.set('pg', used.get('pg')! + opened.reduce((sum, p) => sum + (processCpuMs(p) || 0), 0));
      // NaN: no such process (the baseline's worker running here), or nothing answered.
      const per = (ms: number) => ms / r.requests;
      const server = per(used.get('server')!);
      const bench = per(used.get('bench')!);
      const pg = per(used.get('pg')!);
      const m: Measured = { ...r, side, load, cpu: { bench, server, pg, rest: Math.max(0, per(used.get('machine')!) - bench - (Number.isFinite(server) ? server : 0) - pg) } };
      all.push(m);
      return m;
    };
    const deps = { redisUrl: info.redis_url, prefix: info.redis_prefix, databaseUrl: info.database_url, poolMax: info.pool_max, capture };
    let queues = 0;
    const startQueue = async (s: QueueSettings) => {
      const q = await RawQueue.start(deps, s, `bench-orders-${++queues}`);
      closers.push(() => q.close());
      return q;
    };

    // Warm Flow (JIT, connections, the principal cache; every wallet's first buy).
    await measure('flow', 'closed', 'warmup flow', warmup, flowOp);

    // The HTTP floor, now: the same client, body and loops against a bare Fastify route in the
    // server's process (JSON parse and reply, nothing else). Printed, not judged: what the HTTP hop
    // alone costs here, against what a buy costs.
    const bareOp = async (worker: number): Promise<Outcome> => {
      const target = targets[worker % targets.length]!;
      const r = await postJson(agent, info.bare_port, '/bare', { 'x-api-key': accountOf(worker).api_key, 'idempotency-key': randomUUID() }, buyBody(target, 50));
      return r.status === 200 ? { ok: true } : { ok: false, refusal: `${r.status} ${r.body.slice(0, 100)}` };
    };
    await drive('warmup bare', connections, Math.min(warmup, 1), bareOp);
    const bareMeter = new CpuMeter({ server: child.pid!, bench: process.pid });
    const bareRun = await drive('http floor: bare Fastify', connections, sweepSeconds, bareOp);
    const bareCpu = bareMeter.since();

    // The baseline's best settings on this machine, now: each warmed, measured, then closed.
    const sweep: Measured[] = [];
    const settings = queueSettings(connections, info.pool_max);
    for (const s of settings) {
      const q = await startQueue(s);
      await measure('raw', 'closed', `warmup raw: ${s.name}`, Math.min(warmup, 1), rawOp(q), q.workerPid);
      sweep.push(await measure('raw', 'closed', `sweep raw: ${s.name}`, sweepSeconds, rawOp(q), q.workerPid));
      await closers.pop()!();
    }
    const best = settings[sweep.reduce((b, r, i) => (r.rps > sweep[b]!.rps ? i : b), 0)]!;
    printTable(sweep);
    console.log(`raw baseline: BullMQ, ${best.name} (the fastest)\n`);
    const q = await startQueue(best);
    const raw = rawOp(q);
    await measure('raw', 'closed', `warmup raw: ${best.name}`, warmup, raw, q.workerPid);

    const ratios: number[] = [];
    for (let r = 1; r <= rounds; r++) {
      const sides = [
        () => measure('raw', 'closed', `round ${r} raw (${best.name})`, seconds, raw, q.workerPid),
        () => measure('flow', 'closed', `round ${r} flow (HTTP, route)`, seconds, flowOp),
      ];
      const [a, b] = r % 2 === 1 ? sides : [...sides].reverse();
      const x = await a!();
      const y = await b!();
      const [rawRun, flowRun] = x.side === 'raw' ? [x, y] : [y, x];
      ratios.push(flowRun.rps / rawRun.rps);
      const paced = [
        () => measure('raw', 'paced', `round ${r} raw paced at ${rate}/s`, seconds, raw, q.workerPid),
        () => measure('flow', 'paced', `round ${r} flow paced at ${rate}/s`, seconds, flowOp),
      ];
      for (const p of r % 2 === 1 ? paced : [...paced].reverse()) await p();
    }

    const measuredRuns = all.filter((x) => x.name.startsWith('round '));
    const of = (side: 'flow' | 'raw', load: 'closed' | 'paced') => measuredRuns.filter((x) => x.side === side && x.load === load);
    const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');
    const cpuText = (x: Measured) => `${ms(x.cpu.bench)}/${ms(x.cpu.server)}/${ms(x.cpu.pg)}/${ms(x.cpu.rest)}`;
    printTable(
      measuredRuns.map((x) => ({ ...x, extra: `${String(x.maxInFlight).padEnd(10)}${cpuText(x)}` })),
      'in flight CPU ms per leg: bench/server/pg/rest',
    );
    console.log(
      '  CPU per leg: "bench" is this process (the load generator; the BullMQ worker too when it runs here), "server" the Flow API process or the baseline\'s worker process, ' +
        '"pg" the PostgreSQL backends serving the bench\'s database, "rest" the rest of the machine (Redis, PostgreSQL\'s shared processes, and whatever else runs on it: other work on a shared machine lands here)',
    );
    console.log(`  machine: ${availableParallelism()} cores, 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end`);

    const summary = (runs: Measured[]) => {
      const cpu = (k: keyof Measured['cpu']) => ms(median(runs.map((x) => x.cpu[k])));
      return `${median(runs.map((x) => x.rps)).toFixed(0)} legs/s, p50 ${median(runs.map((x) => x.p50))} ms, p99 ${median(runs.map((x) => x.p99))} ms; CPU ms per leg: bench ${cpu('bench')}, server ${cpu('server')}, pg ${cpu('pg')}, rest ${cpu('rest')}`;
    };
    const ratio = median(ratios);
    console.log(`\nratio flow / raw legs/s per round (closed loops): ${ratios.map((x) => x.toFixed(3)).join(', ')}; median ${ratio.toFixed(3)}`);
    console.log(`medians over the rounds, closed loops: flow ${summary(of('flow', 'closed'))}; raw ${summary(of('raw', 'closed'))}`);
    console.log(`medians over the rounds, paced at ${rate}/s: flow ${summary(of('flow', 'paced'))}; raw ${summary(of('raw', 'paced'))}`);
    console.log(
      `http floor (bare Fastify POST, same client, body and ${connections} loops, ${sweepSeconds}s): ${bareRun.rps.toFixed(0)} req/s, p50 ${bareRun.p50} ms, p99 ${bareRun.p99} ms; ` +
        `CPU ms per request: server ${ms(bareCpu.get('server')! / bareRun.requests)}, bench ${ms(bareCpu.get('bench')! / bareRun.requests)}`,
    );

    const failures = (side: 'flow' | 'raw') => all.filter((x) => x.side === side).reduce((n, x) => n + x.errors + x.non2xx, 0);
    for (const x of all) {
      for (const [label, f] of x.failures) console.log(`  ${x.name}: ${f.count} × ${label} (e.g. ${f.example.slice(0, 200)})`);
    }

    const ids = accounts.map((a) => a.router_account_id);
    if (values['tamper-check']) {
      await tamperLedger(checkPool, ids[0]!);
      console.log(`--tamper-check: wrote one stray ledger entry on ${ids[0]}; the ledger checks must FAIL`);
    }
    const check = await checkOrders(checkPool, ids, legs);
    console.log(`\nchecked ${check.accounts} accounts against ${legs.total} legs answered (every run, warm-ups and sweeps included)`);
    for (const [what, list] of Object.entries({ inconsistent: check.inconsistent, debits: check.debits, orders: check.orders, unrecorded: check.unrecorded })) {
      for (const l of list.slice(0, 5)) console.log(`  ${what}: ${l}`);
    }

    const v = new Verdict('bench orders');
    v.atLeast('flow legs/s, closed loops (median)', median(of('flow', 'closed').map((x) => x.rps)), LEGS_PER_SECOND_TARGET, 'legs/s');
    v.atMost(`flow p99 at ${rate} buys/s paced (median)`, median(of('flow', 'paced').map((x) => x.p99)), P99_TARGET_MS, 'ms');
    v.atMost('flow answers other than 200 with the leg completed, and errors', failures('flow'), 0);
    v.atMost('raw jobs refused or failed', failures('raw'), 0);
    v.atLeast('accounts checked', check.accounts, accounts.length);
    v.atMost('accounts whose ledger does not add up', check.inconsistent.length, 0);
    v.atMost('accounts whose bet_debit entries ≠ legs answered', check.debits.length, 0);
    v.atMost('accounts whose orders ≠ legs answered', check.orders.length, 0);
    v.atMost('accounts whose events or records ≠ legs answered', check.unrecorded.length, 0);
    console.log(`\n  (printed, not judged) median ratio flow / raw legs/s: ${ratio.toFixed(3)}; p99 at ${rate}/s flow / raw: ${(median(of('flow', 'paced').map((x) => x.p99)) / median(of('raw', 'paced').map((x) => x.p99))).toFixed(2)}×`);
    v.print();
  } finally {
    agent.destroy();
    for (const c of closers.reverse()) await c().catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

runIfMain(import.meta.url, run);
