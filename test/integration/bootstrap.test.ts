import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoKey } from '../../cli/bootstrap.js';
import { isWellFormedApiKey } from '../../src/domain/api-key.js';
import { get } from '../support/http.js';
import { startStack, type TestStack } from '../support/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => s?.close());

const demoFile = () => path.join(s.config.dataDir, 'demo-key.json');
const demo = () => JSON.parse(readFileSync(demoFile(), 'utf8')) as { api_key: string; key_id: string; workspace_id: string; router_account_id: string };

describe('the demo key', () => {
  it('is minted once, with a checksum, and a demo key from before checksums is replaced in the same workspace', async () => {
    await ensureDemoKey(s.rt);
    const first = demo();
    expect(isWellFormedApiKey(first.api_key)).toBe(true);
    expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': first.api_key })).status).toBe(200);
    await ensureDemoKey(s.rt);
    expect(demo()).toEqual(first);

    // A data dir from before keys carried a checksum: its demo key is refused by the gate.
    const legacy = `flow_test_${randomBytes(24).toString('base64url')}`;
    writeFileSync(demoFile(), JSON.stringify({ ...first, api_key: legacy }));
    expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': legacy })).status).toBe(401);
    await ensureDemoKey(s.rt);
    const second = demo();
    expect(isWellFormedApiKey(second.api_key)).toBe(true);
    expect(second.key_id).not.toBe(first.key_id);
    expect([second.workspace_id, second.router_account_id]).toEqual([first.workspace_id, first.router_account_id]);
    expect((await get(s.built.app, '/flow/v1/leagues', { 'x-api-key': second.api_key })).status).toBe(200);
    const { rows } = await s.rt.pool.query('SELECT key_id, revoked_at FROM api_keys WHERE key_id = $1', [first.key_id]);
    expect(rows[0].revoked_at).not.toBeNull();
    await ensureDemoKey(s.rt);
    expect(demo()).toEqual(second);
  });
});
