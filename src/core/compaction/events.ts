import type { SurvivalReport } from './checks';

import type { BlockSpan } from '../vocabulary';

export type { BlockStatus } from '../vocabulary';

export interface BlockStats {
  /** Prompt tokens: the server's count when it reported one, else the local estimate. */
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens the server served from its prefix cache, when reported. */
  cachedTokens: number | undefined;
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
  cachedTokens: number;
  /** Head tokens ÷ summary tokens. */
  compressionRatio: number;
  wallMs: number;
  requests: number;
  maxInFlight: number;
}

/** Everything a compaction reports, for the UI, the CLI and the log. */
export type CompactionEvent =
  | { type: 'planned'; compactionId: string; blocks: BlockView[]; headTokens: number; layout: string; mode: string; focus: string | undefined }
  | { type: 'block-queued'; compactionId: string; block: number }
  | { type: 'block-streaming'; compactionId: string; block: number; outputTokens: number }
  | { type: 'block-done'; compactionId: string; block: number; summary: string; stats: BlockStats }
  | { type: 'block-failed'; compactionId: string; block: number; error: string }
  | { type: 'block-retried'; compactionId: string; block: number; attempt: number; reason: string }
  | { type: 'block-edited'; compactionId: string; block: number; summary: string }
  | { type: 'ready'; compactionId: string; totals: CompactionTotals; checks: SurvivalReport }
  | { type: 'cancelled'; compactionId: string }
  | { type: 'adopted'; compactionId: string; totals: CompactionTotals };
