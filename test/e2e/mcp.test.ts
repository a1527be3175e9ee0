/**
 * The MCP tool server of the running service (`flow all`, as an operator starts it): the api role
 * serves it on PORT at /mcp with all 21 tools (the liquidity and history plugins mounted), and its
 * tools answer what the REST routes answer on the simulator's live data.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, demoKey, findTotalLine } from '../support/e2e.js';
import { startService, type Service } from '../support/service.js';

let svc: Service;
let mcp: Client;
let KEY: string;

beforeAll(async () => {
  svc = await startService();
  KEY = demoKey(svc);
  mcp = new Client({ name: 'flow-e2e', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`), { requestInit: { headers: { 'x-api-key': KEY } } }));
}, 120_000);
afterAll(async () => {
  await mcp?.close().catch(() => undefined);
  await svc?.cleanup();
}, 60_000);

const call = async (name: string, args: Record<string, unknown> = {}) => (await mcp.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };

describe('MCP on the running service', () => {
  it('lists the 21 tools and answers the REST data on live simulator quotes', async () => {
    expect((await mcp.listTools()).tools).toHaveLength(21);
    const c = client(svc, KEY);
    const contests = (await c.api('/flow/v1/contests?limit=200')).body.data;
    expect(contests.length).toBeGreaterThan(0);
    expect((await call('list_contests', { limit: 200 })).structuredContent.data.map((x: any) => x.id)).toEqual(contests.map((x: any) => x.id));
    // A contest the simulator quotes; its liquidity through the tool has the positions REST has.
    const { contestId } = await findTotalLine(c);
    const rest = (await c.api(`/flow/v1/contests/${encodeURIComponent(contestId)}/liquidity`)).body.data;
    const liq = (await call('get_contest_liquidity', { contest_id: contestId })).structuredContent.data;
    expect(rest.length).toBeGreaterThan(0);
    expect(liq.map((p: any) => p.position_hash).sort()).toEqual(rest.map((p: any) => p.position_hash).sort());
    // The demo key (scale plan) holds the credits ask spends.
    const before = (await c.api('/flow/v1/auth/me')).body.data.credits.used_this_period;
    const asked = await call('ask', { question: `What are the odds in ${contestId}?` });
    expect(asked.isError ?? false).toBe(false);
    expect(asked.structuredContent.steps.map((s: any) => s.tool)).toEqual(['get_contest', 'get_contest_liquidity']);
    expect((await c.api('/flow/v1/auth/me')).body.data.credits.used_this_period).toBe(before + 1);
  });
});
