/**
 * bench wallet: practice deposits (POST /flow/v1/auth/account/paper/deposit) from --accounts
 * accounts in parallel, each an execution key of its own workspace, over real HTTP from
 * --connections closed loops (loop i deposits for account i mod accounts, a fresh Idempotency-Key
 * and a random amount each time), against the same transaction as raw PostgreSQL with `pg`: the
 * statements the route sends, captured from it (bench/support/raw-deposit.ts), from as many loops
 * on a pool as large as the service's, no HTTP. The raw side gets its best settings: unnamed,
 * prepared and prepared + pipelined statements are each run for --sweep-seconds and the fastest is
 * the baseline.
 * Raw and Flow then run in alternating rounds (this machine's throughput drifts between runs); the
 * verdict uses the median of the per-round ratios of deposits/s. p50 and p99 of both are printed.
 * Targets: median ratio flow / raw deposits/s ≥ 0.5; Flow answers nothing but 201 and the raw side
 * refuses nothing; and afterwards, for every account, the ledger adds up (entries' sum = last
 * balance_after, seq 1..n, one opening entry), its deposit entries and their sum equal the deposits
 * answered (a 201, or a raw commit) and their amounts, and as many balance events and idempotency
 * records were written. No request is abandoned at the deadline (each loop finishes the one in
 * flight), so every deposit that landed was answered and counted.
 * --tamper-check writes one stray ledger entry before the checks: they must then FAIL.
 *   npm run bench -- wallet [--seconds 10] [--rounds 3] [--connections 100] [--accounts 100]
 *                           [--sweep-seconds 3] [--warmup 2] [--tamper-check]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createPool } from '../src/store/pg/pool.js';
import { printTable } from './support/autocannon.js';
import { drive, type DriveResult, type Outcome } from './support/closed-loop.js';
import { postJson } from './support/http-post.js';
import { runIfMain } from './support/main.js';
import { DEPOSIT_PATH, depositBody, RAW_SETTINGS, randomCents, rawDepositor, rawPool, type DepositStatements, type RawSettings } from './support/raw-deposit.js';
import { Verdict } from './support/verdict.js';
import { checkLedgers, AmountTally, tamperLedger } from './support/wallet-ledgers.js';

const RATIO_TARGET = 0.5;

interface ServerInfo {
  port: number;
  database_url: string;
  pool_max: number;
  accounts: { api_key: string; router_account_id: string }[];
  statements: DepositStatements;
}

export default async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '100' },
      accounts: { type: 'string', default: '100' },
      'sweep-seconds': { type: 'string', default: '3' },
      warmup: { type: 'string', default: '2' },
      'tamper-check': { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const accountCount = Number(values.accounts);
  const sweepSeconds = Number(values['sweep-seconds']);
  const warmup = Number(values.warmup);

  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./support/wallet-server.ts', import.meta.url).pathname, String(accountCount)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pools: { end(): Promise<void> }[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    });
    const info = JSON.parse(line) as ServerInfo;
    const accounts = info.accounts;
    const accountOf = (worker: number) => accounts[worker % accounts.length]!;
    console.log(
      `bench wallet: ${accounts.length} accounts (execution keys, one workspace each), ${connections} connections / raw loops, ` +
        `${seconds}s per run, ${rounds} rounds; raw pool ${info.pool_max} connections as the service's; server in pid ${child.pid}`,
    );

    const tally = new AmountTally();
    const flowOp = async (worker: number): Promise<Outcome> => {
      const { api_key, router_account_id } = accountOf(worker);
      const cents = randomCents();
      const r = await postJson(agent, info.port, DEPOSIT_PATH, { 'x-api-key': api_key, 'idempotency-key': randomUUID() }, depositBody(cents));
      if (r.status !== 201) return { ok: false, refusal: `${r.status} ${r.body.slice(0, 300)}` };
      if ((JSON.parse(r.body) as { data?: { amount?: number } }).data?.amount !== cents / 100) return { ok: false, refusal: `201-with-another-amount ${r.body.slice(0, 300)}` };
      tally.add(router_account_id, cents);
      return { ok: true };
    };
    const rawOp = (s: RawSettings) => {
      const pool = rawPool(info.database_url, info.pool_max, s);
      pools.push(pool);
      const deposit = rawDepositor(pool, info.statements, s);
      return async (worker: number): Promise<Outcome> => {
        const account = accountOf(worker).router_account_id;
        const cents = randomCents();
        const out = await deposit(account, cents);
        if (out.ok) tally.add(account, cents);
        return out;
      };
    };

    const flowRuns: DriveResult[] = [];
    const rawRuns: DriveResult[] = [];
    const flow = async (name: string, s: number) => {
      const r = await drive(name, connections, s, flowOp);
      flowRuns.push(r);
      return r;
    };
    const raw = async (name: string, s: number, op: (w: number) => Promise<Outcome>) => {
      const r = await drive(name, connections, s, op);
      rawRuns.push(r);
      return r;
    };

    // Warm both (JIT, connections, prepared statements, the principal cache; every wallet opened).
    await flow('warmup flow', warmup);
    const rawOps = RAW_SETTINGS.map((s) => ({ s, op: rawOp(s) }));
    for (const { s, op } of rawOps) await raw(`warmup ${s.name}`, warmup, op);

    // The raw side's best settings on this machine, now.
    const sweep: DriveResult[] = [];
    for (const { s, op } of rawOps) sweep.push(await raw(`sweep ${s.name}`, sweepSeconds, op));
    const bestAt = sweep.reduce((b, r, i) => (r.rps > sweep[b]!.rps ? i : b), 0);
    const best = rawOps[bestAt]!;
    printTable(sweep);
    console.log(`raw baseline: ${best.s.name} (the fastest)\n`);

    const rows: DriveResult[] = [];
    const ratios: number[] = [];
    for (let r = 1; r <= rounds; r++) {
      const base = await raw(`round ${r} ${best.s.name}`, seconds, best.op);
      const f = await flow(`round ${r} flow (HTTP, auth, rate limit, route)`, seconds);
      rows.push(base, f);
      ratios.push(f.rps / base.rps);
    }
    printTable(rows);
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
    const ratio = median(ratios);
    const measured = (side: DriveResult[]) => side.filter((x) => x.name.startsWith('round '));
    const summary = (side: DriveResult[]) =>
      `${median(side.map((x) => x.rps)).toFixed(0)} deposits/s, p50 ${median(side.map((x) => x.p50))} ms, p99 ${median(side.map((x) => x.p99))} ms`;
    console.log(`\nratio flow / raw deposits/s per round: ${ratios.map((x) => x.toFixed(3)).join(', ')}; median ${ratio.toFixed(3)}`);
    console.log(`medians over the rounds: flow ${summary(measured(flowRuns))}; raw ${summary(measured(rawRuns))}`);

    const failures = (runs: DriveResult[]) => runs.reduce((n, x) => n + x.errors + x.non2xx, 0);
    for (const x of [...flowRuns, ...rawRuns]) {
      for (const [label, f] of x.failures) console.log(`  ${x.name}: ${f.count} × ${label} (e.g. ${f.example.slice(0, 200)})`);
    }

    const checkPool = createPool(info.database_url, 2);
    pools.push(checkPool);
    const ids = accounts.map((a) => a.router_account_id);
    if (values['tamper-check']) {
      await tamperLedger(checkPool, ids[0]!);
      console.log(`--tamper-check: wrote one stray ledger entry on ${ids[0]}; the ledger checks must FAIL`);
    }
    const check = await checkLedgers(checkPool, ids, tally);
    console.log(`\nchecked ${check.accounts} accounts against ${tally.total} deposits answered (every run, warm-ups included)`);
    for (const [what, list] of Object.entries({ inconsistent: check.inconsistent, miscounted: check.miscounted, misadded: check.misadded, unrecorded: check.unrecorded })) {
      for (const l of list.slice(0, 5)) console.log(`  ${what}: ${l}`);
    }

    const v = new Verdict('bench wallet');
    v.atLeast('median ratio flow / raw deposits/s', ratio, RATIO_TARGET);
    v.atMost('flow answers other than 201, and errors', failures(flowRuns), 0);
    v.atMost('raw transactions refused or failed', failures(rawRuns), 0);
    v.atLeast('accounts checked', check.accounts, accounts.length);
    v.atMost('accounts whose ledger does not add up', check.inconsistent.length, 0);
    v.atMost('accounts whose deposit entries ≠ deposits answered', check.miscounted.length, 0);
    v.atMost('accounts whose deposited sum ≠ amounts answered', check.misadded.length, 0);
    v.atMost('accounts whose events or records ≠ deposits answered', check.unrecorded.length, 0);
    v.print();
  } finally {
    agent.destroy();
    for (const p of pools) await p.end().catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

runIfMain(import.meta.url, run);
