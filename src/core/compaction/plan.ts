import type { ChatMessage, StoredMessage } from '../messages';
import type { SplitResult } from '../splitPoint';
import type { PinItem } from '../session/schema';
import type { ToolSpec } from '../ports';
import type { Block } from './partition';
import { partitionHead } from './partition';
import type { Layout, Verbosity } from './prompts';
import type { Mode } from '../vocabulary';

export type CompactionMode = Mode;

export interface CompactionSettings {
  mode: CompactionMode;
  /** Target tokens per block (B). */
  blockTokens: number;
  layout: Layout;
  verbosity: Verbosity;
  /** The developer's focus text, added to every worker. */
  focus: string | undefined;
  /** Summaries of summaries are capped at this many layers. */
  maxDepth: number;
  /** The model's window; prompts that would not fit are pre-trimmed. */
  contextWindow: number;
  model: string | undefined;
  /**
   * all-at-once: every worker is sent together (best when the server shares
   * blocks that are still being computed, as vLLM v1 does). longest-first: the
   * worker with the longest prefix goes first and the rest follow once its
   * prefill is done, so they reuse it even on a server that only caches
   * finished prefills.
   */
  dispatch: 'all-at-once' | 'longest-first';
  /**
   * Stream worker replies so blocks show tokens as they arrive. Costs client
   * CPU per streamed chunk (see bench/results/compaction.txt); off, blocks
   * report only queued / running / done.
   */
  streamWorkers: boolean;
  /** Set for a targeted update: the summary being corrected. */
  amendOf?: string;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = {
  mode: 'parallel',
  blockTokens: 4096,
  layout: 'cache-aligned',
  verbosity: 'detailed',
  focus: undefined,
  maxDepth: 3,
  contextWindow: 32_768,
  model: undefined,
  dispatch: 'all-at-once',
  streamWorkers: true,
};

export const MAX_OUTPUT_TOKENS: Record<Verbosity, number> = { concise: 700, detailed: 1400, 'very detailed': 2800 };

/** Everything a compaction works from, frozen at the moment it starts. */
export interface CompactionSnapshot {
  /** The active context exactly as the agent sends it. */
  context: readonly StoredMessage[];
  /** Local token estimate per context message. */
  tokens: readonly number[];
  split: SplitResult;
  /** The depth of the summary in force (0 when none). */
  priorDepth: number;
  /** The agent's tool definitions, replayed by cache-aligned workers. */
  tools: readonly ToolSpec[];
  strategy: string;
  /** Pins in force; they must survive compaction verbatim. */
  pins: readonly PinItem[];
}

export interface CompactionPlan {
  snapshot: CompactionSnapshot;
  settings: CompactionSettings;
  blocks: Block[];
  headTokens: number;
  /** Depth the adopted summary will have. */
  depth: number;
  /** Earlier summary carried verbatim because re-summarising it would pass maxDepth. */
  carriedSummaryIndex: number | undefined;
}

export function isSummary(m: ChatMessage): boolean {
  return (m as Partial<StoredMessage>).kind === 'summary';
}

export function planCompaction(snapshot: CompactionSnapshot, settings: CompactionSettings): CompactionPlan {
  const { context, tokens, split } = snapshot;
  const priorSummaries = split.headIndices.filter((i) => isSummary(context[i]!));
  const foldsSummary = priorSummaries.length > 0;
  const overCap = foldsSummary && snapshot.priorDepth + 1 > settings.maxDepth;
  const carried = overCap ? priorSummaries[0] : undefined;
  const head = split.headIndices.filter((i) => i !== carried);
  const headTokens = head.reduce((s, i) => s + tokens[i]!, 0);
  const blocks =
    head.length === 0
      ? []
      : settings.mode === 'sequential'
        ? [{ index: 0, messageIndices: [...head], tokens: headTokens, ...(foldsSummary && !overCap ? { isPriorSummary: false } : {}) }]
        : partitionHead(context, head, tokens, { blockTokens: settings.blockTokens, priorSummaries: overCap ? [] : priorSummaries });
  const depth = !foldsSummary ? 1 : overCap ? snapshot.priorDepth : snapshot.priorDepth + 1;
  return { snapshot, settings, blocks, headTokens, depth, carriedSummaryIndex: carried };
}
