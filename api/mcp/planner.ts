/**
 * The seam of the MCP `ask` tool: a planner turns a natural-language question into calls over the
 * read tools and an answer. Two implement it: the rule-based planner (./rule-planner.ts), and the
 * provider planner (./provider-planner.ts), which has an AI provider's model plan through the AI
 * pass-through's own credentials (api/rest/ai/upstream.ts) and is set as AppContext.askPlanner by the
 * composition root when a provider is configured. Either way the reads are the tools' own
 * (AskReads), with the key's entitlements, and ask spends credits.
 */
import type { ToolCaller } from '../rest/tools.js';

/** One read a planner ran, and what it answered (the tool's data, or its refusal). */
export interface AskStep {
  tool: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  data?: unknown;
  pagination?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** The read tools as a planner sees them: by name, checked against the key's entitlements, not counted as requests (ask spends credits instead). */
export interface AskReads {
  /** The tools a planner may call, with their descriptions and argument schemas (what a provider's model is shown). */
  catalog(): { name: string; description: string; input: unknown }[];
  call(tool: string, args: Record<string, unknown>): Promise<AskStep>;
}

/** Who asks: the caller the reads and a provider's credential are for, and the end of the MCP request. */
export interface Asker {
  caller: ToolCaller;
  /** Aborted when the MCP caller goes away before its answer. */
  signal: AbortSignal;
}

/** Why the provider planner handed a question to the rule-based planner (docs/mcp.md "ask"). */
export interface AskFallback {
  provider: string;
  error: { code: string; message: string };
}

export interface AskAnswer {
  /** The answer in plain text. */
  answer: string;
  /** Which planner answered: `rule_based`, or a provider's name. */
  planner: string;
  steps: AskStep[];
  /** Credits spent beyond the question's own (the provider planner's model calls on managed credits); none when absent. */
  extraCredits?: number;
  /** Set when the provider planner could not answer and the rule-based planner did. */
  fallback?: AskFallback;
}

export interface AskPlanner {
  /** `rule_based`, or the provider's name (e.g. `anthropic`). */
  readonly name: string;
  /** Credits a question costs up front (at least 1); a provider planner adds what its model calls spent (AskAnswer.extraCredits). */
  readonly creditsPerQuestion: number;
  answer(question: string, reads: AskReads, asker: Asker): Promise<AskAnswer>;
}
