import type { SurvivalReport } from './checks';

import type { BlockSpan } from '../vocabulary';
import type { ServerLoad } from '../perf/serverLoad';

export type { BlockStatus } from '../vocabulary';

export interface BlockStats {
  /** Prompt tokens: the server's count when it reported one, else the local estimate. */
  inputTokens: number;
  /** Tokens the worker decoded: the server's completion count, a reasoning model's thinking included. */
  outputTokens: number;
  /**
   * Tokens of the summary itself, when it is not outputTokens: a reasoning model's reply whose thinking was removed,
   * counted locally. Unset: the summary is all the worker wrote.
   */
  summaryTokens?: number;
  /** Prompt tokens the server served from its prefix cache, when reported (see cachedTokensOf for what a gap means). */
  cachedTokens: number | undefined;
  /** Which of the compaction's endpoints the worker ran on (an index into its list). */
  endpoint: number;
  /** Whether the server reported usage for the reply at all (without it the token counts above are estimates). */
  usageReported: boolean;
  /** From sending the request to the last token. */
  ms: number;
  /** Waiting for a concurrency slot before that. */
  queuedMs: number;
  /** Local estimate of the part of the prompt no cache can serve. */
  instructionTokens: number;
  attempts: number;
  trimmed: boolean;
}

export interface BlockView extends BlockSpan {
  summary: string | undefined;
  error: string | undefined;
  stats: BlockStats | undefined;
}

export interface CompactionTotals {
  headTokens: number;
  summaryTokens: number;
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens served from the prefix cache; undefined when a worker's count is not known (see cachedTokensOf): unknown, not 0. */
  cachedTokens: number | undefined;
  /** Head tokens ÷ summary tokens. */
  compressionRatio: number;
  wallMs: number;
  requests: number;
  maxInFlight: number;
}

/** One plan the planner considered (src/core/perf/planner.ts), with its predicted wall time. */
export interface PlanOption {
  /** Short name for a row, e.g. "target-block 4096 ×32". */
  label: string;
  mode: 'parallel' | 'sequential';
  layout: 'cache-aligned' | 'target-block';
  /** Target tokens per block (the head's size for the sequential call). */
  blockTokens: number;
  blocks: number;
  /** Workers in flight at once. */
  concurrency: number;
  /** Summary tokens the workers are asked for, in total. */
  summaryTokens: number;
  /** Predicted wall time; null when the option was ruled out before it could be simulated (a prompt over the window). */
  predictedMs: number | null;
  /**
   * Predicted time per output token of the live agent during the compaction
   * divided by its time without one (only when the agent shares the server).
   */
  agentSlowdown?: number;
  /** Set when the option was ruled out, with the reason (e.g. "slows the agent 2.3×"). */
  excluded?: string;
}

/** What the planner chose and what it weighed it against. */
export interface PlanChoice {
  chosen: PlanOption;
  /** Every other option considered, fastest first. */
  alternatives: PlanOption[];
  profile: { name: string; source: string };
  /** Whether the agent's prefix was assumed cached on the server. */
  cache: 'cold' | 'warm';
  /** Background plans bound how much they slow the live agent. */
  background: boolean;
  /** Compaction endpoints target-block workers spread over. */
  replicas: number;
  /** Settings or flags that fixed part of the plan (e.g. "layout=cache-aligned"). */
  forced: string[];
  /** Other clients' work the plan counted on, per compaction endpoint (null: none, or not known); absent when none. */
  serverLoad?: (ServerLoad | null)[];
}

/** After the run: the chosen plan's prediction against what it took. */
export interface PlanOutcome {
  label: string;
  /** null when the chosen option had no prediction (every option was ruled out before it could be simulated). */
  predictedMs: number | null;
  measuredMs: number;
  /** Measured ÷ predicted; null without a prediction. */
  ratio: number | null;
  /** Output tokens the workers wrote (the plan asked for the chosen option's summaryTokens). */
  summaryTokens: number;
  /**
   * The step model's time for what the workers actually wrote: when it is
   * close to measured and predictedMs is not, the model wrote more or less
   * than asked, the timing model held.
   */
  predictedForWrittenMs?: number;
}

/** Everything a compaction reports, for the UI, the CLI and the log. */
export type CompactionEvent =
  | {
      type: 'planned';
      compactionId: string;
      blocks: BlockView[];
      headTokens: number;
      /** Where the verbatim tail starts in the context it was planned on: the split point this compaction adopts. */
      tailStartIndex: number;
      /** What the merge adds to the blocks' summaries (its header, one heading per part), by the local count. */
      headingTokens: number;
      layout: string;
      mode: string;
      focus: string | undefined;
      /** The planner's choice and alternatives; absent when nothing was planned (settings fixed everything). */
      plan?: PlanChoice;
    }
  | { type: 'block-queued'; compactionId: string; block: number }
  /** The worker's request went out (outputTokens 0), then every ~16 output tokens read. */
  | { type: 'block-streaming'; compactionId: string; block: number; outputTokens: number }
  | { type: 'block-done'; compactionId: string; block: number; summary: string; stats: BlockStats }
  | { type: 'block-failed'; compactionId: string; block: number; error: string }
  | { type: 'block-retried'; compactionId: string; block: number; attempt: number; reason: string }
  | { type: 'block-edited'; compactionId: string; block: number; summary: string }
  | {
      type: 'ready';
      compactionId: string;
      totals: CompactionTotals;
      checks: SurvivalReport;
      /** Predicted against measured, when a plan predicted it. */ outcome?: PlanOutcome;
    }
  | { type: 'cancelled'; compactionId: string }
  | { type: 'adopted'; compactionId: string; totals: CompactionTotals };
