/**
 * The AI pass-through's pure rules (src/domain/ai.ts): provider paths, the normalized request per
 * provider, whole answers, and server-sent events parsed however the bytes are cut and folded into
 * the normalized result.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { providerPath, providerRequest, resultFromAnswer, SseParser, StreamFold, type SseEvent } from '../../../src/domain/ai.js';
import { streamedAnswer } from '../../support/fake-ai-provider.js';

describe('providerPath', () => {
  it('maps the pass-through prefix to the provider’s own path, and refuses a way out of it', () => {
    expect(providerPath('anthropic', 'v1/messages')).toBe('/v1/messages');
    expect(providerPath('openai', 'chat/completions')).toBe('/v1/chat/completions');
    expect(providerPath('openai', 'models/gpt-4o%3Amini')).toBe('/v1/models/gpt-4o%3Amini');
    for (const rest of ['..', 'v1/../x', '%2e%2E/x', 'a/./b', 'a%2Fb', 'a%5cb', '%E0%A4%A']) expect(providerPath('anthropic', rest), rest).toBeNull();
  });
});

describe('providerRequest', () => {
  const base = { model: 'm', max_tokens: 10, messages: [{ role: 'system' as const, content: 'S1' }, { role: 'user' as const, content: 'U' }, { role: 'system' as const, content: 'S2' }] };
  it('Anthropic: system text apart, stream as asked', () => {
    expect(providerRequest({ provider: 'anthropic', ...base, stream: true, temperature: 0.2 })).toEqual({
      path: '/v1/messages',
      body: { model: 'm', max_tokens: 10, system: 'S1\n\nS2', messages: [{ role: 'user', content: 'U' }], temperature: 0.2, stream: true },
    });
  });
  it('OpenAI: max_completion_tokens, usage asked for on a stream', () => {
    expect(providerRequest({ provider: 'openai', ...base, stream: true })).toEqual({
      path: '/v1/chat/completions',
      body: { model: 'm', max_completion_tokens: 10, messages: base.messages, stream: true, stream_options: { include_usage: true } },
    });
  });
});

describe('resultFromAnswer', () => {
  it('reads both providers and refuses what is neither', () => {
    expect(resultFromAnswer('anthropic', 'm', { model: 'm2', content: [{ type: 'text', text: 'a' }, { type: 'tool_use' }, { type: 'text', text: 'b' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } })).toEqual({
      provider: 'anthropic',
      model: 'm2',
      output_text: 'ab',
      usage: { input_tokens: 1, output_tokens: 2 },
      stop_reason: 'end_turn',
    });
    expect(resultFromAnswer('openai', 'm', { choices: [{ message: { content: 'hi' }, finish_reason: 'length' }], usage: { prompt_tokens: 3, completion_tokens: 4 } })).toMatchObject({ model: 'm', output_text: 'hi', usage: { input_tokens: 3, output_tokens: 4 }, stop_reason: 'length' });
    expect(() => resultFromAnswer('anthropic', 'm', [])).toThrow();
    expect(() => resultFromAnswer('openai', 'm', { choices: [] })).toThrow();
  });
});

describe('server-sent events', () => {
  /** The text cut at the given points. */
  const cut = (text: string, points: number[]) => {
    const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
    return [0, ...at].map((p, i, all) => text.slice(p, all[i + 1] ?? text.length));
  };

  for (const provider of ['anthropic', 'openai'] as const) {
    it(`${provider}: the same events and the same result however the stream is cut`, () => {
      const text = streamedAnswer(provider, 'model-x');
      const whole = new SseParser().push(text);
      expect(whole.length).toBeGreaterThan(4);
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 30 }), (points) => {
          const parser = new SseParser();
          const events: SseEvent[] = cut(text, points).flatMap((piece) => parser.push(piece));
          expect(events).toEqual(whole);
          const fold = new StreamFold(provider, 'asked');
          const deltas = events.map((e) => fold.apply(e)).filter((t) => t !== null);
          expect(deltas).toEqual(['Hel', 'lo, ', 'world']);
          expect(fold.done).toBe(true);
          expect(fold.result()).toEqual({ provider, model: 'model-x', output_text: 'Hello, world', usage: { input_tokens: 12, output_tokens: 3 }, stop_reason: provider === 'anthropic' ? 'end_turn' : 'stop' });
        }),
        { seed: 11, numRuns: 100 },
      );
    });
  }

  it('CRLF line ends, comments, multi-line data; an error event is reported; an over-long event is refused', () => {
    expect(new SseParser().push(': ping\r\n\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n')).toEqual([{ event: 'e', data: 'a\nb' }]);
    const fold = new StreamFold('anthropic', 'm');
    fold.apply({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) });
    expect(fold.error).toBe('Overloaded');
    expect(() => new SseParser(10).push('data: 0123456789abc')).toThrow();
  });
});
