/**
 * The MCP tool server (spec "MCP tool server"; OPERATOR-INTERFACE "MCP"; docs/mcp.md): POST /mcp,
 * Streamable HTTP through the official SDK, stateless (each POST is answered whole, as JSON, by a
 * server built for that request), authenticated by X-API-Key like any REST request.
 *
 * The tools are the REST reads themselves (api/rest/tools.ts): each tools/call counts one request in
 * the workspace's windows and checks the entitlements through the REST gate's own pieces
 * (Gatekeeper), validates its arguments with the route's schema, and answers the route's data.
 * initialize and tools/list count nothing. `ask` is not counted: it spends credits.
 *
 * Refusals are tool results with isError and {error: {code, message, details}} in the REST codes. What
 * the transport itself refuses (a body that is not JSON-RPC, a wrong Accept) leaves in the REST error
 * body too, so every HTTP error of the service has one shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Type } from 'typebox';
import { API_VERSION } from '../../src/domain/envelope.js';
import type { PrincipalRecord } from '../../src/domain/principal.js';
import { ApiError } from '../../src/errors.js';
import { creditsExhausted, refundCredits, spendCredits } from '../../src/store/pg/credits.js';
import { usageId } from '../../src/store/redis/gate.js';
import { asStoreUnavailable } from '../../src/store/unavailable.js';
import { SERVICE_ACCOUNT_HEADER } from '../rest/account/acting.js';
import { abortOnHangUp } from '../rest/ai/upstream.js';
import type { AppContext } from '../rest/context.js';
import { validationError } from '../rest/plugins/errors.js';
import type { Gatekeeper } from '../rest/plugins/gate.js';
import { createAjv } from '../rest/plugins/validation.js';
import { Text } from '../rest/schemas.js';
import { toolsOf, type ToolAnswer, type ToolCaller, type ToolDef, type ToolRegistry } from '../rest/tools.js';
import type { AskReads, AskStep } from './planner.js';
import { RULE_BASED, RuleBasedPlanner } from './rule-planner.js';

export const MCP_PATH = '/mcp';

const INSTRUCTIONS =
  'Flow: prediction-market and sportsbook data across venues. Tools mirror the REST reads of /flow/v1 (same arguments, same data, same entitlements); ' +
  'each call counts as one request against the key’s rate limits, except ask, which spends reasoning credits. Lists are paged: pass pagination.next_cursor back as cursor.';

/** A tool's refusal: isError, with the REST error body as structured content. */
export function refusal(err: ApiError): CallToolResult {
  const body = err.toBody();
  return { isError: true, structuredContent: body, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** A tool's answer: the REST data (an object as is; a list, or anything paged, as {data, pagination}). */
export function success(answer: ToolAnswer): CallToolResult {
  const { data, pagination } = answer;
  const structured = pagination !== undefined || Array.isArray(data) || data === null || typeof data !== 'object' ? { data, ...(pagination !== undefined ? { pagination } : {}) } : (data as Record<string, unknown>);
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}

/** Where the MCP endpoint meets the rest of the app. */
export interface McpDeps {
  ctx: AppContext;
  keeper: Gatekeeper;
}

export function mcpRoutes(app: FastifyInstance, deps: McpDeps): void {
  const { ctx, keeper } = deps;
  const tools = toolsOf(app);
  const ajv = createAjv('lenient');
  const validators = new WeakMap<ToolDef, ValidateFunction>();
  const log = ctx.log.child({ component: 'mcp' });
  const planner = ctx.askPlanner ?? new RuleBasedPlanner();

  /** The tool's arguments, validated as its REST twin's query is (coerced, defaults filled); 400 otherwise. */
  function argumentsOf(def: ToolDef, raw: Record<string, unknown> | undefined): Record<string, unknown> {
    let validate = validators.get(def);
    if (!validate) {
      validate = ajv.compile(def.input);
      validators.set(def, validate);
    }
    const args = { ...(raw ?? {}) };
    if (!validate(args)) throw validationError(validate.errors ?? [], 'arguments');
    return args;
  }

  /** A failure as the tool result a caller sees; a fault of ours is logged and shown as internal_error. */
  function asRefusal(err: unknown, requestId: string, tool: string): ApiError {
    if (err instanceof ApiError) return err;
    const unavailable = asStoreUnavailable(err);
    if (unavailable) return unavailable;
    log.error({ err, request_id: requestId, tool }, 'tool call failed');
    return new ApiError(500, 'internal_error', 'internal error; the request id is in the log', { request_id: requestId });
  }

  /** One tools/call: counted and judged like a REST request, then the read. */
  async function callTool(rec: PrincipalRecord, caller: ToolCaller, name: string, raw: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const def = tools.get(name);
    if (!def) throw new McpError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(name)}; tools/list names every tool`);
    let admitted = false;
    try {
      if (def.metered) {
        const verdict = await keeper.admit(rec, def.dayExempt, def.entitlements);
        admitted = verdict.principal !== null;
        if (verdict.error) throw verdict.error;
      } else {
        admitted = true;
        const missing = keeper.entitlementError(caller.principal, def.entitlements);
        if (missing) throw missing;
      }
      return success(await def.call(argumentsOf(def, raw), caller));
    } catch (err) {
      const api = asRefusal(err, caller.requestId, name);
      // Counted like a REST answer: an admitted call that ends in a 4xx is one of the key's errors (GET /auth/me usage).
      if (admitted && api.status >= 400 && api.status < 500) ctx.gate.countError(usageId(rec), ctx.clock.now());
      return refusal(api);
    }
  }

  /** The read tools for a planner: the key's entitlements checked, nothing counted (ask pays in credits). */
  function askReads(caller: ToolCaller): AskReads {
    return {
      catalog: () => tools.list().filter((t) => t.metered).map((t) => ({ name: t.name, description: t.description, input: t.input })),
      async call(tool, rawArgs): Promise<AskStep> {
        const def = tools.get(tool);
        const step: AskStep = { tool, arguments: rawArgs, ok: false };
        try {
          if (!def || !def.metered) throw new ApiError(404, 'not_found', `no read tool ${JSON.stringify(tool)}`);
          const missing = keeper.entitlementError(caller.principal, def.entitlements);
          if (missing) throw missing;
          const args = argumentsOf(def, rawArgs);
          const answer = await def.call(args, caller);
          return { ...step, arguments: args, ok: true, data: answer.data, ...(answer.pagination ? { pagination: answer.pagination } : {}) };
        } catch (err) {
          return { ...step, error: asRefusal(err, caller.requestId, tool).toBody().error };
        }
      },
    };
  }

  const AskInput = Type.Object(
    { question: Text({ minLength: 1, maxLength: 2000, description: 'a question about markets, e.g. “What are the odds for Boston at New York?”' }) },
    { additionalProperties: false },
  );
  tools.add({
    name: 'ask',
    description:
      `Answers a natural-language question about markets (contests, prices, game state, price history, leagues, venues) by planning calls over the read tools (${planner.name === RULE_BASED ? 'with a rule-based planner' : `with ${planner.name}’s model`}). Spends reasoning credits from the workspace’s monthly allowance (at least one per question; GET /flow/v1/auth/me shows credits.used_this_period); not counted as a request.`,
    rest: '(none: planned over the read tools)',
    entitlements: [],
    dayExempt: false,
    metered: false,
    input: AskInput,
    call: async (args, caller) => {
      const p = caller.principal;
      const spent = await spendCredits(ctx.pool, { workspaceId: p.workspace_id, plan: p.plan, amount: planner.creditsPerQuestion, nowMs: ctx.clock.now() });
      if (!spent.ok) throw creditsExhausted(spent.credits);
      let answer;
      try {
        answer = await planner.answer(args.question as string, askReads(caller), { caller, signal: caller.signal ?? new AbortController().signal });
      } catch (err) {
        // No answer, no charge for the question (model calls a provider answered stay spent, as on the AI pass-through).
        await refundCredits(ctx.pool, spent.spend);
        throw err;
      }
      const { extraCredits = 0, fallback, ...rest } = answer;
      return { data: { question: args.question, ...rest, credits_spent: planner.creditsPerQuestion + extraCredits, ...(fallback ? { fallback } : {}) } };
    },
  });

  app.post(MCP_PATH, { schema: { hide: true }, config: { public: true } }, (req, reply) => serve(req, reply));
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE); the SDK client takes 405 as "none offered".
  const notAllowed = async () => {
    throw new ApiError(405, 'method_not_allowed', 'the MCP endpoint is stateless: POST JSON-RPC messages to it; it offers no GET stream and no session to DELETE', undefined, { allow: 'POST' });
  };
  app.get(MCP_PATH, { schema: { hide: true }, config: { public: true } }, notAllowed);
  app.delete(MCP_PATH, { schema: { hide: true }, config: { public: true } }, notAllowed);

  async function serve(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    // Who calls, counting nothing (401 for no key or a bad one, before any MCP message is read).
    const rec = await keeper.authenticate(req.headers);
    const principal = keeper.principal(rec);
    // The response counter counts a 4xx of a known caller as one of its errors, as on REST.
    req.principal = principal;
    // The signal stops a provider planner's model calls when the caller hangs up (ask).
    const caller: ToolCaller = { principal, serviceAccount: req.headers[SERVICE_ACCOUNT_HEADER], requestId: req.id, signal: abortOnHangUp(reply).signal };
    const server = buildServer(tools, (name, args) => callTool(rec, caller, name, args));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      let request: Request;
      try {
        request = webRequest(req);
      } catch {
        throw new ApiError(400, 'invalid_request', 'the request’s headers cannot be read as HTTP headers');
      }
      const response = await transport.handleRequest(request, { parsedBody: req.body });
      return await relay(reply, response);
    } finally {
      await server.close().catch(() => undefined);
    }
  }
}

/** The SDK server of one request: initialize, tools/list (free) and tools/call (through `call`). */
function buildServer(tools: ToolRegistry, call: (name: string, args: Record<string, unknown> | undefined) => Promise<CallToolResult>): Server {
  // The low-level Server, not McpServer: the tools' schemas are the REST routes' JSON Schemas
  // (TypeBox), which McpServer would want rewritten as zod; one schema serves both surfaces here.
  const server = new Server({ name: 'flow', title: 'Flow market data', version: API_VERSION }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.list().map((t) => ({
      name: t.name,
      description: `${t.description}${t.metered ? ` Same data as ${t.rest}.` : ''}${t.entitlements.length ? ` Needs ${t.entitlements.join(', ')}.` : ''}`,
      inputSchema: t.input as unknown as { type: 'object'; properties?: Record<string, object>; required?: string[] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => call(request.params.name, request.params.arguments));
  return server;
}

/** The Fastify request as the Web Request the SDK transport reads (its body is passed parsed). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  // The URL is informational to the transport; the path is ours, whatever Host the client sent.
  return new Request(`http://mcp.invalid${MCP_PATH}`, { method: 'POST', headers });
}

/** REST codes for what the transport refuses before any message runs (it answers JSON-RPC errors). */
const TRANSPORT_CODES: Record<number, string> = {
  400: 'invalid_body',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The transport's answer sent through Fastify; its HTTP refusals rewritten in the REST error body. */
async function relay(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  const text = response.status === 202 || response.status === 204 ? '' : await response.text();
  if (response.status >= 400) {
    let message = `the MCP request was refused (HTTP ${response.status})`;
    try {
      const parsed = JSON.parse(text) as { error?: { message?: string } };
      if (parsed.error?.message) message = parsed.error.message;
    } catch {
      /* not JSON: the generic message stands */
    }
    throw new ApiError(response.status, TRANSPORT_CODES[response.status] ?? 'invalid_request', message);
  }
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value);
  });
  return reply.send(text.length > 0 ? text : undefined);
}
