/**
 * The tool-use conversation in each provider's protocol (src/domain/ai-tool-use.ts): the requests
 * it builds, the turns it reads and echoes back, the tool results it sends; and any answer at all is
 * either read or refused as a ProviderAnswerError, never another exception (a provider's answer is
 * input from outside).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProviderAnswerError } from '../../../src/domain/ai.js';
import { ToolConversation, type ToolSpec } from '../../../src/domain/ai-tool-use.js';

const TOOLS: ToolSpec[] = [{ name: 'get_contest', description: 'One contest', input: { type: 'object', properties: { contest_id: { type: 'string' } }, required: ['contest_id'] } }];

describe('Anthropic', () => {
  it('tools as input_schema, tool_use read and echoed, tool_result answered with is_error on a refusal, tool_choice none on the final request', () => {
    const c = new ToolConversation('anthropic', 'SYS', 'Q?');
    expect(c.request('m', 100, TOOLS, false)).toEqual({
      model: 'm',
      max_tokens: 100,
      system: 'SYS',
      messages: [{ role: 'user', content: 'Q?' }],
      tools: [{ name: 'get_contest', description: 'One contest', input_schema: TOOLS[0]!.input }],
    });
    const turn = c.read({
      content: [
        { type: 'thinking', thinking: 'hidden' },
        { type: 'text', text: 'Looking. ' },
        { type: 'tool_use', id: 'tu_1', name: 'get_contest', input: { contest_id: 'ct_1' } },
        { type: 'tool_use', id: 'tu_2', name: 'get_contest', input: 'not an object' },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    expect(turn).toEqual({
      text: 'Looking. ',
      calls: [
        { id: 'tu_1', name: 'get_contest', input: { contest_id: 'ct_1' } },
        { id: 'tu_2', name: 'get_contest', input: null },
      ],
      stop: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    c.answer([
      { id: 'tu_1', content: '{"data":1}', isError: false },
      { id: 'tu_2', content: '{"error":{}}', isError: true },
    ]);
    const final = c.request('m', 100, TOOLS, true);
    expect(final.tool_choice).toEqual({ type: 'none' });
    expect(final.messages).toEqual([
      { role: 'user', content: 'Q?' },
      // Only what was read goes back: the unknown block is left out, a non-object input sent as {}.
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking. ' },
          { type: 'tool_use', id: 'tu_1', name: 'get_contest', input: { contest_id: 'ct_1' } },
          { type: 'tool_use', id: 'tu_2', name: 'get_contest', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'tu_1', content: '{"data":1}' },
          { type: 'tool_result', tool_use_id: 'tu_2', content: '{"error":{}}', is_error: true },
        ],
      },
    ]);
  });
});

describe('OpenAI', () => {
  it('tools as functions, tool_calls read (arguments parsed) and echoed as written, tool messages answered, tool_choice none on the final request', () => {
    const c = new ToolConversation('openai', 'SYS', 'Q?');
    expect(c.request('g', 100, TOOLS, false)).toEqual({
      model: 'g',
      max_completion_tokens: 100,
      messages: [
        { role: 'system', content: 'SYS' },
        { role: 'user', content: 'Q?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_contest', description: 'One contest', parameters: TOOLS[0]!.input } }],
    });
    const calls = [
      { id: 'c1', type: 'function', function: { name: 'get_contest', arguments: '{"contest_id":"ct_1"}' } },
      { id: 'c2', type: 'function', function: { name: 'get_contest', arguments: '[1' } },
      { id: 'c3', type: 'function', function: { name: 'get_contest', arguments: '' } },
    ];
    const turn = c.read({ choices: [{ message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 2 } });
    expect(turn).toEqual({
      text: '',
      calls: [
        { id: 'c1', name: 'get_contest', input: { contest_id: 'ct_1' } },
        { id: 'c2', name: 'get_contest', input: null },
        { id: 'c3', name: 'get_contest', input: {} },
      ],
      stop: 'tool_calls',
      usage: { input_tokens: 1, output_tokens: 2 },
    });
    c.answer(calls.map((x) => ({ id: x.id, content: `r-${x.id}`, isError: x.id === 'c2' })));
    const final = c.request('g', 100, TOOLS, true);
    expect(final.tool_choice).toBe('none');
    expect((final.messages as unknown[]).slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: 'c1', content: 'r-c1' },
      { role: 'tool', tool_call_id: 'c2', content: 'r-c2' },
      { role: 'tool', tool_call_id: 'c3', content: 'r-c3' },
    ]);
  });
});

describe('answers that are not the provider’s shape', () => {
  it('are refused as ProviderAnswerError', () => {
    const refused: [('anthropic' | 'openai'), unknown][] = [
      ['anthropic', null],
      ['anthropic', { content: 'text' }],
      ['anthropic', { content: [{ type: 'tool_use', name: 'x', input: {} }] }],
      ['anthropic', { content: [{ type: 'tool_use', id: 'has space', name: 'x', input: {} }] }],
      ['anthropic', { content: [{ type: 'tool_use', id: 'a', name: '', input: {} }] }],
      ['openai', { choices: [] }],
      ['openai', { choices: [{ message: { tool_calls: 'x' } }] }],
      ['openai', { choices: [{ message: { tool_calls: [{ id: 'a' }] } }] }],
      ['openai', { choices: [{ message: { tool_calls: [{ id: 'a', function: { arguments: '{}' } }] } }] }],
    ];
    for (const [provider, answer] of refused) expect(() => new ToolConversation(provider, 's', 'q').read(answer), JSON.stringify(answer)).toThrow(ProviderAnswerError);
  });

  it('any JSON at all is read or refused as ProviderAnswerError, and a turn read is well formed', () => {
    const block = fc.oneof(
      fc.record({ type: fc.constantFrom('text', 'tool_use', 'other'), text: fc.anything(), id: fc.oneof(fc.string(), fc.anything()), name: fc.oneof(fc.string(), fc.anything()), input: fc.anything() }, { requiredKeys: ['type'] }),
      fc.anything(),
    );
    const call = fc.oneof(fc.record({ id: fc.oneof(fc.string(), fc.anything()), function: fc.oneof(fc.record({ name: fc.anything(), arguments: fc.oneof(fc.json(), fc.string(), fc.anything()) }), fc.anything()) }), fc.anything());
    const answer = fc.oneof(
      fc.anything(),
      fc.record({ content: fc.oneof(fc.array(block), fc.anything()), stop_reason: fc.anything(), usage: fc.anything() }),
      fc.record({ choices: fc.oneof(fc.array(fc.record({ message: fc.oneof(fc.record({ content: fc.anything(), tool_calls: fc.oneof(fc.array(call), fc.anything()) }), fc.anything()), finish_reason: fc.anything() })), fc.anything()), usage: fc.anything() }),
    );
    fc.assert(
      fc.property(fc.constantFrom('anthropic' as const, 'openai' as const), answer, (provider, a) => {
        const c = new ToolConversation(provider, 's', 'q');
        let turn;
        try {
          turn = c.read(a);
        } catch (err) {
          expect(err).toBeInstanceOf(ProviderAnswerError);
          return;
        }
        expect(typeof turn.text).toBe('string');
        for (const x of turn.calls) {
          expect(x.id).toMatch(/^[\x21-\x7e]{1,200}$/);
          expect(typeof x.name).toBe('string');
          expect(x.input === null || (typeof x.input === 'object' && !Array.isArray(x.input))).toBe(true);
        }
        expect(Number.isFinite(turn.usage.input_tokens) && Number.isFinite(turn.usage.output_tokens)).toBe(true);
        // What was read can be sent back: the next request serializes.
        c.answer(turn.calls.map((x) => ({ id: x.id, content: 'r', isError: false })));
        expect(() => JSON.stringify(c.request('m', 1, TOOLS, false))).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});
