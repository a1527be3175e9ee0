/**
 * The seam of the MCP `ask` tool: a planner turns a natural-language question into calls over the
 * read tools and an answer. The rule-based planner (./rule-planner.ts) is the one this build runs; a
 * planner backed by an AI provider (through the AI pass-through, api/rest/ai/) plugs in here by
 * implementing AskPlanner and being set as AppContext.askPlanner by the composition root. Either way
 * the reads are the tools' own (AskReads), with the key's entitlements, and ask spends credits.
 */

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

export interface AskAnswer {
  /** The answer in plain text. */
  answer: string;
  /** Which planner answered: `rule_based`, or a provider's name. */
  planner: string;
  steps: AskStep[];
}

export interface AskPlanner {
  /** `rule_based`, or the provider's name (e.g. `anthropic`). */
  readonly name: string;
  /** Credits one question costs (at least 1); a provider planner may charge by what it used. */
  readonly creditsPerQuestion: number;
  answer(question: string, reads: AskReads): Promise<AskAnswer>;
}
