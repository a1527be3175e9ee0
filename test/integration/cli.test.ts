import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPlayerJwt } from '../../src/jwt.js';
import { get } from '../support/http.js';
import { runCli } from '../support/cli.js';
import { startStack, type TestStack } from '../support/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

describe('flow keys', () => {
  it('create --json prints the documented object and the key works', async () => {
    const r = await runCli(['keys', 'create', '--plan', 'pro', '--type', 'execution', '--env', 'test', '--json'], s.env);
    expect(r.code, r.stderr).toBe(0);
    const k = JSON.parse(r.stdout);
    expect(Object.keys(k).sort()).toEqual(
      ['api_key', 'entitlements', 'environment', 'key_id', 'key_type', 'plan', 'rate_limit_per_day', 'rate_limit_per_minute', 'router_account_id', 'workspace_id'].sort(),
    );
    expect(k).toMatchObject({ plan: 'pro', key_type: 'execution', environment: 'test', rate_limit_per_minute: 300, rate_limit_per_day: 50_000 });
    expect(k.entitlements).toContain('trade:execute');
    const me = await get(s.built.app, '/flow/v1/auth/me', { 'x-api-key': k.api_key });
    expect(me.body.data.router_account_id).toBe(k.router_account_id);

    // A second key in the same workspace, narrowed, with explicit entitlements.
    const r2 = await runCli(
      ['keys', 'create', '--plan', 'pro', '--type', 'data', '--env', 'test', '--workspace', k.workspace_id, '--entitlements', 'depth:read,trades:read', '--rate-limit-per-minute', '10', '--rate-limit-per-day', '99', '--json'],
      s.env,
    );
    const k2 = JSON.parse(r2.stdout);
    expect(k2.workspace_id).toBe(k.workspace_id);
    expect(k2.router_account_id).toBe(k.router_account_id);
    expect(k2.entitlements).toEqual(['account:read', 'depth:read', 'markets:read', 'reference:read', 'trades:read']);
    expect([k2.rate_limit_per_minute, k2.rate_limit_per_day]).toEqual([10, 99]);

    const list = await runCli(['keys', 'list', '--workspace', k.workspace_id, '--json'], s.env);
    const listed = JSON.parse(list.stdout);
    expect(listed.map((x: any) => x.key_id)).toEqual([k.key_id, k2.key_id]);
    expect(list.stdout).not.toContain(k.api_key);

    const rev = await runCli(['keys', 'revoke', k2.key_id], s.env);
    expect(rev.code, rev.stderr).toBe(0);
    let r401 = await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': k2.api_key });
    for (let i = 0; i < 50 && r401.status !== 401; i++) {
      await new Promise((res) => setTimeout(res, 20));
      r401 = await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': k2.api_key });
    }
    expect(r401.status).toBe(401);
  });

  it('bad arguments exit 2 with a message that says what to do', async () => {
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--plan', 'gold', '--type', 'data', '--env', 'test'], /--plan must be one of/],
      [['keys', 'create', '--plan', 'pro', '--type', 'admin', '--env', 'test'], /--type must be data or execution/],
      [['keys', 'create', '--plan', 'pro', '--type', 'data', '--env', 'prod'], /--env must be test or live/],
      [['keys', 'create', '--plan', 'pro', '--type', 'data', '--env', 'test', '--workspace', 'ws_nope'], /does not exist/],
      [['keys', 'create', '--plan', 'pro', '--type', 'data', '--env', 'test', '--rate-limit-per-minute', '0'], /positive integer/],
      [['keys', 'revoke', 'key_nope'], /no active key/],
      [['jwt'], /usage: flow jwt/],
    ];
    // At once: each is a process start, slow on a loaded machine.
    const runs = await Promise.all(cases.map(([args]) => runCli(args, s.env)));
    cases.forEach(([args, msg], i) => {
      expect(runs[i]!.code, args.join(' ')).toBe(2);
      expect(runs[i]!.stderr).toMatch(msg);
    });
  }, 90_000);
});

describe('flow jwt', () => {
  it('prints a token that authenticates as the account', async () => {
    const created = JSON.parse((await runCli(['keys', 'create', '--plan', 'free', '--type', 'data', '--env', 'live', '--json'], s.env)).stdout);
    const r = await runCli(['jwt', '--account', created.router_account_id, '--ttl', '120'], s.env);
    expect(r.code, r.stderr).toBe(0);
    const token = r.stdout.trim();
    const v = verifyPlayerJwt('test-jwt-secret', token);
    expect(v.ok && v.claims.sub).toBe(created.router_account_id);
    expect(v.ok && v.claims.exp - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(120);
    const me = await get(s.built.app, '/flow/v1/auth/me', { authorization: `Bearer ${token}` });
    expect(me.body.data).toMatchObject({ auth_method: 'jwt', router_account_id: created.router_account_id });
  });
});
