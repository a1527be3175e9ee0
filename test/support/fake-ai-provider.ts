/**
 * A local stand-in for Anthropic's and OpenAI's APIs, enough for the AI pass-through tests: POST
 * /v1/messages (Anthropic) and POST /v1/chat/completions (OpenAI), whole or streamed as server-sent
 * events in several chunks, GET /v1/models, and a JSON 404 for anything else. The model name picks a
 * failure: `fail-400`, `fail-401`, `fail-404`, `fail-429`, `fail-500`, `fail-html` (a 422 page),
 * `broken` (the stream stops after its first chunk and the connection is cut).
 *
 * hold() makes the next streamed answer stop after its first chunk until released, so a test can see
 * that chunk reach its client while the provider has not finished.
 *
 * A tool-using model: a request that offers `tools` is checked as the provider would check it (each
 * tool well formed; every call of an earlier model turn answered by a tool result with its id, in
 * the provider's shape; else a 400 in the provider's error shape). Then `toolScript`, when set,
 * decides the answer from what the request holds (the question, the tools offered, the tool results
 * just sent, whether tools are forbidden): tool calls, a final text, an HTTP error or a raw body; it
 * is written in the provider's own shape (Anthropic `tool_use` blocks, OpenAI `tool_calls`).
 * callThenQuote() and endlessCalls() are the scripts the tests use.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface Hold {
  /** Resolves once the first chunk of the held answer is written. */
  firstChunkSent: Promise<void>;
  /** Lets the rest of the answer go. */
  release(): void;
  /** True once the whole answer was written. */
  readonly finished: boolean;
  /** Resolves when the caller's side closed the connection before the answer finished. */
  abandoned: Promise<void>;
}

export interface FakeProvider {
  url: string;
  requests: SeenRequest[];
  hold(): Hold;
  /** Answers tool-use requests (a body with `tools`); null: such a request gets the plain text answer. */
  toolScript: ToolScript | null;
  close(): Promise<void>;
}

/** A tool-use request as the fake model reads it, the same for both providers. */
export interface ToolRequestSeen {
  kind: 'anthropic' | 'openai';
  /** Model turns before this request, plus one. */
  round: number;
  /** The first user message. */
  question: string;
  /** The names of the tools offered. */
  tools: string[];
  /** tool_choice forbids tools (Anthropic {type: "none"}, OpenAI "none"). */
  toolsForbidden: boolean;
  /** The results of the last model turn's calls, in order. */
  results: { tool: string; content: string; isError: boolean }[];
}

export type ToolReply =
  | { text?: string; calls: { name: string; input: Record<string, unknown> }[] }
  | { text: string }
  | { status: number }
  | { raw: string };

export type ToolScript = (seen: ToolRequestSeen) => ToolReply;

/**
 * A model that calls `tool` with `input` once (if it is offered), then answers in text made by
 * `quote` from what the tool returned, so an answer holding that text proves the result came back.
 */
export function callThenQuote(tool: string, input: Record<string, unknown>, quote: (result: { body: any; isError: boolean }) => string): ToolScript {
  return (seen) => {
    if (seen.results.length === 0) return seen.tools.includes(tool) ? { calls: [{ name: tool, input }] } : { text: `no tool ${tool} was offered` };
    const r = seen.results.find((x) => x.tool === tool);
    return { text: r ? quote({ body: JSON.parse(r.content), isError: r.isError }) : `${tool} was never answered` };
  };
}

/** A model that never stops asking: `perTurn` calls of `tool` every turn, tool_choice or not. */
export const endlessCalls =
  (tool: string, input: Record<string, unknown>, perTurn = 1): ToolScript =>
  () => ({ text: 'Still looking.', calls: Array.from({ length: perTurn }, () => ({ name: tool, input })) });

export const FAKE_TEXT = ['Hel', 'lo, ', 'world'];

const sse = (event: string | null, data: unknown) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** The chunks of a streamed answer: the first carries the opening and the first piece of text. */
function anthropicChunks(model: string): string[] {
  const [first, ...rest] = FAKE_TEXT;
  return [
    sse('message_start', { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], usage: { input_tokens: 12, output_tokens: 1 } } }) +
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: first } }),
    ...rest.map((t) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }) +
      sse('message_stop', { type: 'message_stop' }),
  ];
}

function openaiChunks(model: string): string[] {
  const chunk = (delta: object, finish: string | null) => sse(null, { id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const [first, ...rest] = FAKE_TEXT;
  return [
    chunk({ role: 'assistant', content: first }, null),
    ...rest.map((t) => chunk({ content: t }, null)),
    chunk({}, 'stop') + sse(null, { id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } }) + sse(null, '[DONE]'),
  ];
}

/** The exact bytes of a streamed answer, as the provider writes them. */
export const streamedAnswer = (kind: 'anthropic' | 'openai', model: string): string => (kind === 'anthropic' ? anthropicChunks(model) : openaiChunks(model)).join('');

function whole(kind: 'anthropic' | 'openai', model: string): object {
  return kind === 'anthropic'
    ? { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: FAKE_TEXT.join('') }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 3 } }
    : { id: 'chatcmpl-fake', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: FAKE_TEXT.join('') }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 3 } };
}

function providerError(kind: 'anthropic' | 'openai', status: number, message: string): object {
  return kind === 'anthropic' ? { type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message } } : { error: { message, type: 'invalid_request_error', code: null } };
}

const json = (res: ServerResponse, status: number, body: object) => {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', 'set-cookie': 'tracking=1', 'x-ratelimit-limit-requests': '50' });
  res.end(JSON.stringify(body));
};

class ToolRequestError extends Error {}

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Reads a tool-use request as the provider would, refusing (ToolRequestError) what it would refuse. */
function readToolRequest(kind: 'anthropic' | 'openai', body: any): ToolRequestSeen {
  const fail = (m: string) => {
    throw new ToolRequestError(m);
  };
  if (!Array.isArray(body.tools) || body.tools.length === 0) fail('tools must be a non-empty list');
  const tools: string[] = body.tools.map((t: any) => {
    const name = kind === 'anthropic' ? t?.name : t?.type === 'function' ? t.function?.name : undefined;
    const schema = kind === 'anthropic' ? t?.input_schema : t?.function?.parameters;
    const description = kind === 'anthropic' ? t?.description : t?.function?.description;
    if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) fail(`bad tool name ${JSON.stringify(name)}`);
    if (typeof description !== 'string' || description.length === 0) fail(`tool ${name} has no description`);
    if (!isObj(schema) || schema.type !== 'object') fail(`tool ${name}'s schema is not an object schema`);
    return name;
  });
  const messages: any[] = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) fail('messages must be a non-empty list');
  const question = messages.find((m) => m.role === 'user' && typeof m.content === 'string')?.content;
  if (typeof question !== 'string') fail('no user question');
  const names = new Map<string, string>();
  let round = 1;
  let results: ToolRequestSeen['results'] = [];
  if (kind === 'anthropic') {
    if (typeof body.system !== 'string') fail('system must be text');
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m.role !== 'assistant') continue;
      round++;
      const uses = (Array.isArray(m.content) ? m.content : []).filter((b: any) => b.type === 'tool_use');
      if (uses.length === 0) continue;
      const next = messages[i + 1];
      const answered = Array.isArray(next?.content) ? next.content.filter((b: any) => b.type === 'tool_result') : [];
      for (const u of uses) {
        if (!isObj(u.input)) fail(`tool_use ${u.id} has no input object`);
        names.set(u.id, u.name);
        if (!answered.some((r: any) => r.tool_use_id === u.id)) fail(`tool_use ids were found without tool_result blocks immediately after: ${u.id}`);
      }
      if (i + 1 === messages.length - 1) results = answered.map((r: any) => ({ tool: names.get(r.tool_use_id) ?? '?', content: String(r.content), isError: r.is_error === true }));
    }
  } else {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m.role !== 'assistant') continue;
      round++;
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      const answered: any[] = [];
      for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) answered.push(messages[j]);
      for (const c of calls) {
        if (typeof c.function?.arguments !== 'string') fail(`tool call ${c.id} has no arguments string`);
        names.set(c.id, c.function.name);
        if (!answered.some((r) => r.tool_call_id === c.id)) fail(`an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id': ${c.id}`);
      }
      if (calls.length > 0 && i + answered.length === messages.length - 1) results = answered.map((r) => ({ tool: names.get(r.tool_call_id) ?? '?', content: String(r.content), isError: String(r.content).startsWith('{"error":') }));
    }
  }
  const choice = body.tool_choice;
  return { kind, round, question, tools, toolsForbidden: kind === 'anthropic' ? choice?.type === 'none' : choice === 'none', results };
}

let callIds = 0;

/** A scripted model turn in the provider's shape. */
function toolAnswer(kind: 'anthropic' | 'openai', model: string, reply: { text?: string; calls?: { name: string; input: Record<string, unknown> }[] }): object {
  const calls = (reply.calls ?? []).map((c) => ({ ...c, id: `${kind === 'anthropic' ? 'toolu' : 'call'}_fake_${++callIds}` }));
  if (kind === 'anthropic') {
    return {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: [...(reply.text ? [{ type: 'text', text: reply.text }] : []), ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }))],
      stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
      usage: { input_tokens: 40, output_tokens: 9 },
    };
  }
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) } : {}) },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 40, completion_tokens: 9 },
  };
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const requests: SeenRequest[] = [];
  const holds: Array<{ sent: () => void; gate: Promise<void>; done: () => void; abandoned: () => void }> = [];

  async function stream(req: IncomingMessage, res: ServerResponse, chunks: string[], broken: boolean): Promise<void> {
    const hold = holds.shift();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_fake', 'cache-control': 'no-cache' });
    let closedEarly = false;
    res.once('close', () => {
      if (!res.writableFinished) {
        closedEarly = true;
        hold?.abandoned();
      }
    });
    res.write(chunks[0]);
    hold?.sent();
    if (broken) {
      // Cut off mid-answer, as a provider crash would.
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    if (hold) await hold.gate;
    for (const c of chunks.slice(1)) {
      if (closedEarly) return;
      await new Promise((r) => setTimeout(r, 5));
      res.write(c);
    }
    res.end();
    hold?.done();
  }

  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined;
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const kind = path.startsWith('/v1/messages') ? 'anthropic' : path.startsWith('/v1/chat/completions') ? 'openai' : null;
      if (req.method === 'GET' && path.startsWith('/v1/models')) return json(res, 200, { data: [{ id: 'model-a' }, { id: 'model-b' }], has_more: false });
      if (req.method !== 'POST' || kind === null) return json(res, 404, providerError('anthropic', 404, `no route ${req.method} ${path}`));
      const model = String(body?.model ?? '');
      const fail = /^fail-(\d+|html)$/.exec(model);
      if (fail) {
        if (fail[1] === 'html') {
          res.writeHead(422, { 'content-type': 'text/html' });
          return res.end('<html>unprocessable</html>');
        }
        const status = Number(fail[1]);
        if (status === 429) res.setHeader('retry-after', '7');
        return json(res, status, providerError(kind, status, `fake ${status} for ${model}`));
      }
      if (body?.tools !== undefined && !body?.stream) {
        let seen: ToolRequestSeen;
        try {
          seen = readToolRequest(kind, body);
        } catch (err) {
          if (!(err instanceof ToolRequestError)) throw err;
          return json(res, 400, providerError(kind, 400, err.message));
        }
        const reply = fake.toolScript?.(seen) ?? { text: FAKE_TEXT.join('') };
        if ('status' in reply) return json(res, reply.status, providerError(kind, reply.status, `fake ${reply.status} from the script`));
        if ('raw' in reply) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(reply.raw);
        }
        return json(res, 200, toolAnswer(kind, model, reply));
      }
      if (body?.stream) return void stream(req, res, kind === 'anthropic' ? anthropicChunks(model) : openaiChunks(model), model === 'broken');
      return json(res, 200, whole(kind, model));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeProvider = {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolScript: null,
    hold() {
      let sent!: () => void;
      let release!: () => void;
      let abandoned!: () => void;
      const state = { finished: false };
      const firstChunkSent = new Promise<void>((r) => (sent = r));
      const gate = new Promise<void>((r) => (release = r));
      const abandonedP = new Promise<void>((r) => (abandoned = r));
      holds.push({ sent, gate, done: () => void (state.finished = true), abandoned });
      return {
        firstChunkSent,
        release,
        abandoned: abandonedP,
        get finished() {
          return state.finished;
        },
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
