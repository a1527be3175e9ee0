/**
 * A tool-using conversation in each provider's own protocol (pure; used by the MCP `ask` tool's
 * provider planner, api/mcp/provider-planner.ts):
 *
 * - Anthropic's Messages API: `tools` [{name, description, input_schema}]; the model answers content
 *   blocks, `tool_use` {id, name, input} among them; each is answered in the next user turn by a
 *   `tool_result` {tool_use_id, content, is_error?}. `tool_choice: {type: "none"}` forbids tools.
 * - OpenAI's Chat Completions: `tools` [{type: "function", function: {name, description,
 *   parameters}}]; the model's message carries `tool_calls` [{id, function: {name, arguments (a JSON
 *   string)}}]; each is answered by a message {role: "tool", tool_call_id, content}.
 *   `tool_choice: "none"` forbids tools.
 *
 * The conversation keeps the turns in the provider's shape, echoing the model's turns as it read
 * them, so the next request is exactly what the provider expects. An answer that is not the
 * provider's shape is a ProviderAnswerError.
 */
import { ProviderAnswerError, type AiProvider, type InferenceUsage } from './ai.js';

/** A tool as the model is shown it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  input: unknown;
}

/** One call the model asked for. `input` is null when its arguments are not a JSON object. */
export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown> | null;
}

/** What the model answered in one round. */
export interface ToolTurn {
  text: string;
  calls: ToolCall[];
  /** The provider's own reason (`tool_use`, `end_turn`, `tool_calls`, `stop`, `max_tokens`, ...). */
  stop: string | null;
  usage: InferenceUsage;
}

/** The answer to one call, as the model is told it. */
export interface ToolResult {
  id: string;
  content: string;
  isError: boolean;
}

const obj = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
/** A call id goes back to the provider as it came: a printable string of sane length. */
const callId = (v: unknown): string => {
  if (typeof v !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(v)) throw new ProviderAnswerError('a tool call has no usable id');
  return v;
};
const toolName = (v: unknown): string => {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200) throw new ProviderAnswerError('a tool call has no tool name');
  return v;
};

export const TOOL_USE_PATH: Record<AiProvider, string> = { anthropic: '/v1/messages', openai: '/v1/chat/completions' };

export class ToolConversation {
  private readonly messages: Record<string, unknown>[];

  constructor(
    readonly provider: AiProvider,
    private readonly system: string,
    question: string,
  ) {
    this.messages = provider === 'anthropic' ? [{ role: 'user', content: question }] : [{ role: 'system', content: system }, { role: 'user', content: question }];
  }

  /** The next request's body; `final` forbids tools, so the model has to answer in text. */
  request(model: string, maxTokens: number, tools: readonly ToolSpec[], final: boolean): Record<string, unknown> {
    if (this.provider === 'anthropic') {
      return {
        model,
        max_tokens: maxTokens,
        system: this.system,
        messages: this.messages,
        tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input })),
        ...(final ? { tool_choice: { type: 'none' } } : {}),
      };
    }
    return {
      model,
      max_completion_tokens: maxTokens,
      messages: this.messages,
      tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input } })),
      ...(final ? { tool_choice: 'none' } : {}),
    };
  }

  /** Reads the model's answer and keeps its turn in the conversation. */
  read(answer: unknown): ToolTurn {
    const a = obj(answer);
    if (!a) throw new ProviderAnswerError('the provider answered with something other than a JSON object');
    return this.provider === 'anthropic' ? this.readAnthropic(a) : this.readOpenai(a);
  }

  /** Answers the calls of the last turn, every one of them (both providers refuse a call left unanswered). */
  answer(results: readonly ToolResult[]): void {
    if (this.provider === 'anthropic') {
      this.messages.push({ role: 'user', content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, ...(r.isError ? { is_error: true } : {}) })) });
      return;
    }
    for (const r of results) this.messages.push({ role: 'tool', tool_call_id: r.id, content: r.content });
  }

  private readAnthropic(a: Record<string, unknown>): ToolTurn {
    if (!Array.isArray(a.content)) throw new ProviderAnswerError('the provider’s answer has no content list');
    let text = '';
    const calls: ToolCall[] = [];
    // The turn echoed back holds what was read, nothing else (no block type this planner does not understand).
    const echoed: Record<string, unknown>[] = [];
    for (const raw of a.content) {
      const b = obj(raw);
      if (b?.type === 'text' && typeof b.text === 'string') {
        text += b.text;
        echoed.push({ type: 'text', text: b.text });
      } else if (b?.type === 'tool_use') {
        const call = { id: callId(b.id), name: toolName(b.name), input: obj(b.input) };
        calls.push(call);
        echoed.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input ?? {} });
      }
    }
    if (echoed.length > 0) this.messages.push({ role: 'assistant', content: echoed });
    const usage = obj(a.usage) ?? {};
    return { text, calls, stop: typeof a.stop_reason === 'string' ? a.stop_reason : null, usage: { input_tokens: count(usage.input_tokens), output_tokens: count(usage.output_tokens) } };
  }

  private readOpenai(a: Record<string, unknown>): ToolTurn {
    const choice = Array.isArray(a.choices) ? obj(a.choices[0]) : null;
    const message = obj(choice?.message);
    if (!message) throw new ProviderAnswerError('the provider’s answer has no choice with a message');
    const text = typeof message.content === 'string' ? message.content : '';
    const calls: ToolCall[] = [];
    const echoed: Record<string, unknown>[] = [];
    if (message.tool_calls !== undefined && message.tool_calls !== null) {
      if (!Array.isArray(message.tool_calls)) throw new ProviderAnswerError('the provider’s tool_calls is not a list');
      for (const raw of message.tool_calls) {
        const c = obj(raw);
        const fn = obj(c?.function);
        if (!c || !fn) throw new ProviderAnswerError('a tool call has no function');
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        const call = { id: callId(c.id), name: toolName(fn.name), input: parseArguments(args) };
        calls.push(call);
        echoed.push({ id: call.id, type: 'function', function: { name: call.name, arguments: args } });
      }
    }
    this.messages.push({ role: 'assistant', content: text.length > 0 ? text : null, ...(echoed.length > 0 ? { tool_calls: echoed } : {}) });
    const usage = obj(a.usage) ?? {};
    return { text, calls, stop: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null, usage: { input_tokens: count(usage.prompt_tokens), output_tokens: count(usage.completion_tokens) } };
  }
}

/** OpenAI's arguments are a JSON string the model wrote: an object, or null when it is not one. */
function parseArguments(raw: string): Record<string, unknown> | null {
  if (raw.trim() === '') return {};
  try {
    return obj(JSON.parse(raw));
  } catch {
    return null;
  }
}
