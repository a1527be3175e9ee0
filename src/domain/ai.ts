/**
 * The AI pass-through's rules (spec "AI pass-through"; docs/ai.md), pure: which provider paths and
 * headers pass, how a provider is authenticated, and the normalized inference (POST
 * /flow/v1/ai/inferences) translated to and from each provider's own API: Anthropic's Messages API
 * (POST /v1/messages) and OpenAI's Chat Completions (POST /v1/chat/completions), answered whole or
 * as server-sent events.
 */

export const AI_PROVIDERS = ['anthropic', 'openai'] as const;
export type AiProvider = (typeof AI_PROVIDERS)[number];

/** Anthropic requires a version header; a caller that sends none gets this one. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * Request headers that reach the provider. Everything else stays here: the caller's Flow key
 * (X-API-Key, Authorization), X-Service-Account, cookies, and any provider organization header that
 * would not fit the key the service chooses.
 */
export const FORWARDED_REQUEST_HEADERS: Record<AiProvider, readonly string[]> = {
  anthropic: ['content-type', 'accept', 'anthropic-version', 'anthropic-beta'],
  openai: ['content-type', 'accept', 'openai-beta'],
};

/** Response headers that reach the caller. The provider's own rate-limit and cookie headers do not. */
export const FORWARDED_RESPONSE_HEADERS: readonly string[] = ['content-type', 'request-id', 'x-request-id', 'retry-after'];

/** How the provider is told the key. */
export function providerAuthHeaders(provider: AiProvider, key: string): Record<string, string> {
  return provider === 'anthropic' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
}

/**
 * The provider path for what follows the pass-through prefix: /flow/v1/ai/anthropic/<rest> is
 * <rest> at Anthropic (`v1/messages`), /flow/v1/ai/openai/v1/<rest> is v1/<rest> at OpenAI (so an
 * SDK's base URL is the prefix). Null when a segment is `.` or `..` (literal or percent-encoded)
 * or hides a slash or backslash, any of which could leave the provider's base path.
 */
export function providerPath(provider: AiProvider, rest: string): string | null {
  for (const seg of rest.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      return null;
    }
    // An encoded slash or backslash could become a separator at a server that decodes it.
    if (decoded === '.' || decoded === '..' || /[/\\]/.test(decoded)) return null;
  }
  return provider === 'anthropic' ? `/${rest}` : `/v1/${rest}`;
}

// ---- the normalized inference -------------------------------------------------------------------

export const INFERENCE_ROLES = ['system', 'user', 'assistant'] as const;
export type InferenceRole = (typeof INFERENCE_ROLES)[number];

export interface InferenceRequest {
  provider: AiProvider;
  model: string;
  messages: { role: InferenceRole; content: string }[];
  max_tokens: number;
  stream?: boolean;
  temperature?: number;
}

export interface InferenceUsage {
  input_tokens: number;
  output_tokens: number;
}

export interface InferenceResult {
  provider: AiProvider;
  model: string;
  output_text: string;
  usage: InferenceUsage;
  /** The provider's reason for stopping (`end_turn`, `max_tokens`, `stop`, `length`, ...), as it says it. */
  stop_reason: string | null;
}

/** The provider request for a normalized one: its path and JSON body. */
export function providerRequest(req: InferenceRequest): { path: string; body: Record<string, unknown> } {
  const temperature = req.temperature === undefined ? {} : { temperature: req.temperature };
  if (req.provider === 'anthropic') {
    // The Messages API takes system text apart from the turns.
    const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
    const messages = req.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content }));
    return {
      path: '/v1/messages',
      body: { model: req.model, max_tokens: req.max_tokens, messages, ...(system ? { system } : {}), ...temperature, ...(req.stream ? { stream: true } : {}) },
    };
  }
  return {
    path: '/v1/chat/completions',
    body: {
      model: req.model,
      // max_completion_tokens: the Chat Completions limit every current model takes (max_tokens is refused by reasoning models).
      max_completion_tokens: req.max_tokens,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      ...temperature,
      // Usage arrives in a last chunk only when asked for.
      ...(req.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    },
  };
}

export class ProviderAnswerError extends Error {}

const obj = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** A provider's whole answer, normalized; a shape that is not the provider's is an error. */
export function resultFromAnswer(provider: AiProvider, requestedModel: string, answer: unknown): InferenceResult {
  const a = obj(answer);
  if (!a) throw new ProviderAnswerError('the provider answered with something other than a JSON object');
  const model = typeof a.model === 'string' ? a.model : requestedModel;
  const usage = obj(a.usage) ?? {};
  if (provider === 'anthropic') {
    if (!Array.isArray(a.content)) throw new ProviderAnswerError('the provider’s answer has no content list');
    const text = a.content.map((b) => (obj(b)?.type === 'text' && typeof obj(b)?.text === 'string' ? (obj(b)!.text as string) : '')).join('');
    return { provider, model, output_text: text, usage: { input_tokens: count(usage.input_tokens), output_tokens: count(usage.output_tokens) }, stop_reason: typeof a.stop_reason === 'string' ? a.stop_reason : null };
  }
  const choice = Array.isArray(a.choices) ? obj(a.choices[0]) : null;
  const message = obj(choice?.message);
  if (!message) throw new ProviderAnswerError('the provider’s answer has no choice with a message');
  return {
    provider,
    model,
    output_text: typeof message.content === 'string' ? message.content : '',
    usage: { input_tokens: count(usage.prompt_tokens), output_tokens: count(usage.completion_tokens) },
    stop_reason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
  };
}

/** The message a provider's error body carries ({error: {message}} at both providers), if any. */
export function providerErrorMessage(body: unknown): string | null {
  const m = obj(obj(body)?.error)?.message;
  return typeof m === 'string' ? m.slice(0, 1000) : null;
}

// ---- server-sent events ---------------------------------------------------------------------------

export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Splits a server-sent event stream into events as its text arrives in arbitrary pieces. Holds at
 * most one unfinished event; one over `maxEventChars` is an error (a provider never sends such).
 */
export class SseParser {
  private buffer = '';
  constructor(private readonly maxEventChars = 1_000_000) {}

  push(text: string): SseEvent[] {
    this.buffer += text.replace(/\r\n?/g, '\n');
    const out: SseEvent[] = [];
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length > 0) out.push({ event, data: data.join('\n') });
    }
    if (this.buffer.length > this.maxEventChars) throw new ProviderAnswerError('the provider sent an event too large to be one');
    return out;
  }
}

/** One server-sent event, as the normalized stream writes it. */
export const sseFrame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Folds a provider's streamed events into the normalized result, handing back each piece of text as
 * it arrives. `error` is set when the provider reported an error inside the stream.
 */
export class StreamFold {
  private text = '';
  private model: string;
  private usage: InferenceUsage = { input_tokens: 0, output_tokens: 0 };
  private stop: string | null = null;
  error: string | null = null;
  done = false;

  constructor(
    private readonly provider: AiProvider,
    requestedModel: string,
  ) {
    this.model = requestedModel;
  }

  /** The text this event adds, or null. */
  apply(e: SseEvent): string | null {
    if (this.provider === 'openai' && e.data === '[DONE]') {
      this.done = true;
      return null;
    }
    let d: Record<string, unknown> | null;
    try {
      d = obj(JSON.parse(e.data));
    } catch {
      return null;
    }
    if (!d) return null;
    return this.provider === 'anthropic' ? this.anthropic(d) : this.openai(d);
  }

  private anthropic(d: Record<string, unknown>): string | null {
    switch (d.type) {
      case 'message_start': {
        const m = obj(d.message);
        if (typeof m?.model === 'string') this.model = m.model;
        const u = obj(m?.usage);
        if (u) this.usage = { input_tokens: count(u.input_tokens), output_tokens: count(u.output_tokens) };
        return null;
      }
      case 'content_block_delta': {
        const delta = obj(d.delta);
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
          this.text += delta.text;
          return delta.text;
        }
        return null;
      }
      case 'message_delta': {
        const reason = obj(d.delta)?.stop_reason;
        if (typeof reason === 'string') this.stop = reason;
        const u = obj(d.usage);
        if (u && u.output_tokens !== undefined) this.usage = { ...this.usage, output_tokens: count(u.output_tokens) };
        if (u && u.input_tokens !== undefined) this.usage = { ...this.usage, input_tokens: count(u.input_tokens) };
        return null;
      }
      case 'message_stop':
        this.done = true;
        return null;
      case 'error':
        this.error = providerErrorMessage(d) ?? 'the provider reported an error in the stream';
        return null;
      default:
        return null;
    }
  }

  private openai(d: Record<string, unknown>): string | null {
    if (d.error) {
      this.error = providerErrorMessage(d) ?? 'the provider reported an error in the stream';
      return null;
    }
    if (typeof d.model === 'string') this.model = d.model;
    const u = obj(d.usage);
    if (u) this.usage = { input_tokens: count(u.prompt_tokens), output_tokens: count(u.completion_tokens) };
    const choice = Array.isArray(d.choices) ? obj(d.choices[0]) : null;
    if (typeof choice?.finish_reason === 'string') this.stop = choice.finish_reason;
    const content = obj(choice?.delta)?.content;
    if (typeof content === 'string' && content.length > 0) {
      this.text += content;
      return content;
    }
    return null;
  }

  result(): InferenceResult {
    return { provider: this.provider, model: this.model, output_text: this.text, usage: { ...this.usage }, stop_reason: this.stop };
  }
}
