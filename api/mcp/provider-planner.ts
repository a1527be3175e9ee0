/**
 * The provider planner of the MCP `ask` tool (docs/mcp.md "ask"): an AI provider's model plans the
 * reads, in the provider's own tool-use protocol (src/domain/ai-tool-use.ts). It is shown the
 * question and the read tools (AskReads.catalog(): names, descriptions, argument schemas); each
 * call it asks for runs through AskReads.call, with the key's own entitlements, and its data, or its
 * refusal as a tool error, goes back to the model; the model's final text is the answer.
 *
 * Bounds (ASK_BOUNDS), so a model that keeps asking cannot run on: at most `rounds` model calls and
 * `toolCalls` reads per question. The last round (or the first once the reads are spent) forbids
 * tools; a model that asks anyway is stopped there, the answer saying so. A call beyond the read
 * budget is answered to the model as an error, not run. A tool result is cut at `resultChars`.
 *
 * Credits: the question's own credit (creditsPerQuestion, spent by the tool before planning), plus
 * one per model call on managed credits, as the same call through the AI pass-through costs (none
 * on the account's own key); a call that fails is given back (./model-call.ts).
 *
 * When the provider planner cannot answer (no key for the account, credits spent, the provider out of
 * reach, failing, refusing, or answering what cannot be read), the rule-based planner answers the
 * question instead, saying why in its first line and in `fallback`; reads already made stay in the
 * steps, model calls already answered stay spent. Only a caller that hung up gets no answer.
 */
import type { AiProvider } from '../../src/domain/ai.js';
import { ProviderAnswerError } from '../../src/domain/ai.js';
import { ToolConversation, type ToolResult, type ToolTurn } from '../../src/domain/ai-tool-use.js';
import { ApiError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { AppContext } from '../rest/context.js';
import { callModel } from './model-call.js';
import type { AskAnswer, Asker, AskFallback, AskPlanner, AskReads, AskStep } from './planner.js';
import { RuleBasedPlanner } from './rule-planner.js';

export interface AskBounds {
  /** Model calls per question, the last one without tools. */
  rounds: number;
  /** Reads per question. */
  toolCalls: number;
  /** A tool result is cut to this many characters before the model sees it. */
  resultChars: number;
  /** max_tokens of each model call. */
  maxTokens: number;
  /** How long the provider has to answer one model call. */
  timeoutMs: number;
  /** A model answer longer than this is refused unread. */
  maxAnswerBytes: number;
}

export const ASK_BOUNDS: AskBounds = { rounds: 6, toolCalls: 12, resultChars: 16_000, maxTokens: 1_024, timeoutMs: 120_000, maxAnswerBytes: 1_000_000 };

/** What one question has made so far: kept when the provider planner fails and the rule-based one answers. */
interface Run {
  steps: AskStep[];
  credits: number;
  rounds: number;
}

const systemPrompt = (b: AskBounds) =>
  [
    'You answer questions about prediction markets and sportsbooks for a user of Flow, a market-data service that aggregates venues.',
    'Read the data with the tools (contests, prices and liquidity per venue, game state, price history, leagues, venues, market types); never invent a number, an id or a venue.',
    'Name each contest you talk about with its id. Prices are probabilities between 0 and 1.',
    'A tool may refuse (entitlement_required means the user’s plan lacks that data; not_found means there is none): say so rather than guess.',
    `You may make at most ${b.toolCalls} tool calls in all, over at most ${b.rounds - 1} rounds; then answer.`,
    'Answer in plain text, briefly.',
  ].join(' ');

export class ProviderPlanner implements AskPlanner {
  readonly creditsPerQuestion = 1;
  private readonly rule = new RuleBasedPlanner();
  private readonly log: Logger;

  constructor(
    private readonly ctx: AppContext,
    readonly name: AiProvider,
    private readonly model: string,
    private readonly bounds: AskBounds = ASK_BOUNDS,
  ) {
    this.log = ctx.log.child({ component: 'ask', planner: name });
  }

  async answer(question: string, reads: AskReads, asker: Asker): Promise<AskAnswer> {
    const run: Run = { steps: [], credits: 0, rounds: 0 };
    try {
      const answer = await this.plan(question, reads, asker, run);
      this.log.info({ request_id: asker.caller.requestId, rounds: run.rounds, reads: run.steps.length, model_credits: run.credits }, 'ask answered by the provider');
      return answer;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'client_closed') throw err;
      const error = this.failureOf(err, asker.caller.requestId);
      this.log.warn({ request_id: asker.caller.requestId, code: error.code, rounds: run.rounds, reads: run.steps.length }, 'ask: the provider planner could not answer; the rule-based planner answers');
      const fallback: AskFallback = { provider: this.name, error };
      const ruled = await this.rule.answerBecause(question, reads, `the ${this.name} planner could not answer: ${error.code}, ${error.message}`);
      return { ...ruled, steps: [...run.steps, ...ruled.steps], extraCredits: run.credits, fallback };
    }
  }

  private async plan(question: string, reads: AskReads, asker: Asker, run: Run): Promise<AskAnswer> {
    const b = this.bounds;
    const conversation = new ToolConversation(this.name, systemPrompt(b), question);
    const tools = reads.catalog();
    const readTurn = (answer: unknown): ToolTurn => {
      const turn = conversation.read(answer);
      if (turn.calls.length === 0 && turn.text.trim() === '') throw new ProviderAnswerError(`neither text nor a tool call (stop reason ${turn.stop ?? 'none'})`);
      return turn;
    };
    for (let round = 1; ; round++) {
      const final = round >= b.rounds || run.steps.length >= b.toolCalls;
      const body = conversation.request(this.model, b.maxTokens, tools, final);
      const { value: turn, credits } = await callModel(this.ctx, this.name, asker, body, b, readTurn);
      run.credits += credits;
      run.rounds = round;
      if (turn.calls.length === 0) return this.done(turn.text.trim(), run);
      if (final) return this.done(stopped(turn.text, run), run);
      const results: ToolResult[] = [];
      for (const call of turn.calls) {
        if (run.steps.length >= b.toolCalls) {
          results.push({ id: call.id, isError: true, content: JSON.stringify({ error: { code: 'ask_budget_spent', message: `this question may make at most ${b.toolCalls} tool calls; answer from the results you have` } }) });
          continue;
        }
        const step = call.input === null ? notAnObject(call.name) : await reads.call(call.name, call.input);
        run.steps.push(step);
        results.push({ id: call.id, isError: !step.ok, content: resultText(step, b.resultChars) });
      }
      conversation.answer(results);
    }
  }

  private done(answer: string, run: Run): AskAnswer {
    return { answer, planner: this.name, steps: run.steps, extraCredits: run.credits };
  }

  /** The failure as the caller reads it in `fallback.error`: the pass-through's codes, or internal_error for a fault of ours (logged). */
  private failureOf(err: unknown, requestId: string): AskFallback['error'] {
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    this.log.error({ err, request_id: requestId }, 'ask: the provider planner failed');
    return { code: 'internal_error', message: 'the provider planner failed; the request id is in the log' };
  }
}

/** The answer of a model stopped at the bounds: what text it gave, then why it ends there. */
function stopped(text: string, run: Run): string {
  const note = `(The planner stopped here: the model still asked for tools after ${run.rounds} model calls and ${run.steps.length} reads, the most one question may use; the reads made are in steps.)`;
  return text.trim() === '' ? note : `${text.trim()}\n\n${note}`;
}

/** A tool result as the model reads it: the tool's data (and pagination), or its error, as JSON; cut when long. */
function resultText(step: AskStep, max: number): string {
  const body = step.ok ? { data: step.data, ...(step.pagination !== undefined ? { pagination: step.pagination } : {}) } : { error: step.error };
  const text = JSON.stringify(body) ?? 'null';
  return text.length <= max ? text : `${text.slice(0, max)} … [cut at ${max} of ${text.length} characters: call again with narrower arguments, e.g. a smaller limit]`;
}

/** A call whose arguments the model did not write as a JSON object: refused like a bad argument, never run. */
const notAnObject = (tool: string): AskStep => ({
  tool,
  arguments: {},
  ok: false,
  error: { code: 'invalid_parameter', message: 'the arguments must be a JSON object', details: { parameter: 'arguments' } },
});

/** The planner `ask` runs under this configuration: the provider planner when a provider is configured, else none (the tool's default, the rule-based planner). */
export function askPlannerFor(ctx: AppContext): AskPlanner | undefined {
  const { provider, model } = ctx.config.ask;
  return provider === null ? undefined : new ProviderPlanner(ctx, provider, model);
}
