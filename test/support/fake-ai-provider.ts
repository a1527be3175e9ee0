/**
 * A local stand-in for Anthropic's and OpenAI's APIs, enough for the AI pass-through tests: POST
 * /v1/messages (Anthropic) and POST /v1/chat/completions (OpenAI), whole or streamed as server-sent
 * events in several chunks, GET /v1/models, and a JSON 404 for anything else. The model name picks a
 * failure: `fail-400`, `fail-401`, `fail-404`, `fail-429`, `fail-500`, `fail-html` (a 422 page),
 * `broken` (the stream stops after its first chunk and the connection is cut).
 *
 * hold() makes the next streamed answer stop after its first chunk until released, so a test can see
 * that chunk reach its client while the provider has not finished.
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
  close(): Promise<void>;
}

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
      if (body?.stream) return void stream(req, res, kind === 'anthropic' ? anthropicChunks(model) : openaiChunks(model), model === 'broken');
      return json(res, 200, whole(kind, model));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
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
}
