/**
 * `flow venues matches` and `flow venues replay` as an operator runs them (a child process): the
 * report on the repo's recordings, usage errors exiting 2 with what to do, and the replay server
 * printing the environment, serving, and stopping on SIGTERM.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../../support/scratch.js';

const ROOT = join(import.meta.dirname, '../../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const flow = (...args: string[]) => spawnSync(TSX, ['cli/flow.ts', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'warn' } });

// Each test starts the CLI under tsx (compiling its imports) up to three times: seconds each on a busy machine.
describe('flow venues matches', { timeout: 120_000 }, () => {
  it('prints the report of the repo recordings as JSON', () => {
    const r = flow('venues', 'matches', '--json');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ venues: ['kalshi', 'polymarket'], contests: 14, matched: 0, unmatched: 14, threshold: 0.85, position_map: { kalshi: {}, polymarket: {} } });
    expect(report.decisions).toHaveLength(14);
  });

  it('takes operator alias and mapping files, and says what to fix in a bad one (exit 2)', () => {
    const dir = scratchDir('venues-cli');
    writeFileSync(join(dir, 'mapping.json'), JSON.stringify({ version: 1, merge: [{ contests: ['kalshi-KXELONMARS-99', 'pm_ev_30829'], id: 'pair' }] }));
    const ok = flow('venues', 'matches', '--mapping', join(dir, 'mapping.json'), '--aliases', join(ROOT, 'test/venues/matching/fixtures/aliases-kalshi-nba-outright.json'));
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('matched: 2');
    expect(ok.stdout).toContain('→ pair (override)');
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ version: 1, merge: [{ contests: ['only-one'] }] }));
    const bad = flow('venues', 'matches', '--mapping', join(dir, 'bad.json'));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`flow: ${join(dir, 'bad.json')}: merge[0].contests: needs at least 2 items`);
    expect(bad.stderr).toContain('the format is in docs/venues.md "Matching venues to one catalog"');
  });

  it('exits 2 on a missing recordings folder or an unknown flag, saying what to pass', () => {
    const missing = flow('venues', 'matches', '--dir', '/nonexistent/recordings');
    expect([missing.status, missing.stderr.trim()]).toEqual([2, 'flow: --dir /nonexistent/recordings: no such folder; pass a folder with kalshi/ and/or polymarket/ in it']);
    const empty = flow('venues', 'matches', '--dir', scratchDir('empty'));
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(/holds no recordings: expected .*\/kalshi\/ or .*\/polymarket\/.*; pass --dir <recordings>/);
    const flag = flow('venues', 'matches', '--bogus');
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--bogus'");
    expect(flag.stderr).toContain('usage: flow venues matches');
  });
});

describe('flow venues replay', { timeout: 120_000 }, () => {
  it('prints the environment, serves the recordings, and stops on SIGTERM', async () => {
    const child = spawn(TSX, ['cli/flow.ts', 'venues', 'replay', '--port', '0'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn' } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      // Starting the CLI from source compiles it first: under the full suite's load on two cores this
      // took over 20 s once (its siblings' spawns take 17-24 s there); the test's own bound is 120 s.
      const end = Date.now() + 60_000;
      while (!/export FLOW_POLYMARKET_WS_URL=/.test(out)) {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`no environment printed: ${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(out).toContain('kalshi KXELONMARS-99: book from rest-orderbook.json');
      expect(out).toContain('(recorded for KXGOLDH-26AUG2711-T4615.99: no recording holds this market\'s book)');
      expect(out).toContain('export FLOW_VENUES=kalshi,polymarket');
      const base = /export FLOW_KALSHI_BASE_URL=(\S+)/.exec(out)![1]!;
      const r = await fetch(`${base}/markets?tickers=KXELONMARS-99`);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { markets: { ticker: string }[] }).markets.map((m) => m.ticker)).toEqual(['KXELONMARS-99']);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
