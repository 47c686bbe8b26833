import { isSummaryMessage, type StoredMessage } from '../messages';
import type { SplitResult } from '../splitPoint';
import type { PinItem } from '../session/schema';
import type { ToolSpec } from '../ports';
import type { PerfProfile } from '../perf/profile';
import type { ServerLoad } from '../perf/serverLoad';
import { H100_7B } from '../perf/profile';
import type { PlanForced, PlannerInput, WorkPlan } from '../perf/planner';
import { planWork, predictWithOutputs } from '../perf/planner';
import { summaryRoom, summaryVolume } from '../perf/volume';
import type { PlanChoice } from './events';
import type { Block } from './partition';
import { headModel } from './headModel';
import type { Layout, Verbosity } from './prompts';
import type { Mode } from '../vocabulary';

export type CompactionMode = Mode;

export interface CompactionSettings {
  /** 'auto' = the planner chooses. */
  mode: CompactionMode | 'auto';
  /** Target tokens per block (B); 0 = the planner chooses. */
  blockTokens: number;
  /** 'auto' = the planner chooses. */
  layout: Layout | 'auto';
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
  /** The judge's diagnosis of that summary, sent as fenced data (see InstructionInput.amendNotes). */
  amendNotes?: string;
  /** Workers in flight at once; 0 or unset = the planner chooses (up to maxConcurrency). */
  concurrency?: number;
  /** Most workers in flight the endpoint allows (its limiter). */
  maxConcurrency?: number;
  /** The server's performance profile; unset = h100-7b. */
  profile?: PerfProfile;
  /** Whether the agent's context is in the server's prefix cache (it is right after an agent request). */
  cache?: 'cold' | 'warm';
  /** The fraction of the window the context should land at (`lo`): bounds the summary volume. */
  targetFraction?: number;
  /** Set when the live agent keeps decoding on the same server: the plan may slow it at most this much. */
  background?: { maxSlowdown: number };
  /** Other clients' work on each compaction endpoint (the agent's first), as read from the servers' /metrics. */
  serverLoad?: readonly (ServerLoad | undefined)[];
  /** Compaction endpoints (the agent's first); target-block workers spread over them. */
  replicas?: number;
  /** Most tokens of earlier conversation a target-block worker gets before its block. */
  targetContextTokens?: number;
  /** The total summary volume; unset = from the verbosity and the target after compaction. */
  summaryTokens?: number;
}

/** `lo` when the settings give no target: the default threshold's fraction of the window. */
export const DEFAULT_TARGET_FRACTION = 0.4;

/** Target-block workers get this much of the conversation just before their block, for continuity. */
export const TARGET_CONTEXT_TOKENS = 512;

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = {
  mode: 'auto',
  blockTokens: 0,
  layout: 'auto',
  verbosity: 'detailed',
  focus: undefined,
  maxDepth: 3,
  contextWindow: 32_768,
  model: undefined,
  dispatch: 'all-at-once',
  streamWorkers: true,
};

/** The settings with every planner choice made. */
export type ResolvedSettings = Omit<CompactionSettings, 'mode' | 'layout'> & { mode: CompactionMode; layout: Layout };

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

/** Per-worker details of the plan the engine runs. */
export interface WorkerPlan {
  /** Summary tokens asked of each block, in block order. */
  targets: number[];
  maxTokens: number[];
  /** Block indices in the order they are sent. */
  order: number[];
  concurrency: number;
}

export interface CompactionPlan {
  snapshot: CompactionSnapshot;
  settings: ResolvedSettings;
  blocks: Block[];
  headTokens: number;
  /**
   * What adoption takes out of the context: the head, and the earlier summary carried verbatim into the new one.
   * The new summary's size is measured against this (the check that it shrinks the context, the ratio shown).
   */
  replacedTokens: number;
  /** Depth the adopted summary will have. */
  depth: number;
  /** Earlier summary carried verbatim because re-summarising it would pass maxDepth. */
  carriedSummaryIndex: number | undefined;
  /** Summary tokens the user's goal asks for, in total. */
  summaryTokens: number;
  workers: WorkerPlan;
  /** The planner's choice and alternatives. */
  choice: PlanChoice | undefined;
}

function forcedOf(s: CompactionSettings): PlanForced {
  const f: PlanForced = {};
  if (s.mode !== 'auto') f.mode = s.mode;
  if (s.layout !== 'auto') f.layout = s.layout;
  if (s.blockTokens > 0 && s.mode !== 'sequential') f.blockTokens = s.blockTokens;
  if (s.concurrency && s.concurrency > 0) f.concurrency = s.concurrency;
  return f;
}

/**
 * At the depth cap an earlier summary is carried into the next one verbatim while it takes at most this share of the
 * room a summary has to land the context at lo. Past it, it is summarised once more, one layer past the cap: each
 * carry adds the new conversation's summary to it, so carried on it only grows, until no compaction can make room
 * (a reviewer's 12K-window run carried 15 nested layers to 3.3K tokens and then stopped for good).
 */
export const CARRY_ROOM_SHARE = 0.5;

/** Which earlier summary is carried verbatim rather than summarised again (see CARRY_ROOM_SHARE); undefined: none. */
export function carriedSummary(o: {
  tokens: readonly number[];
  headIndices: readonly number[];
  /** The summary in force, if the head holds it. */
  summaryIndex: number | undefined;
  priorDepth: number;
  maxDepth: number;
  /** `lo` as a fraction of the window, and the window. */
  lo: number;
  window: number;
}): number | undefined {
  if (o.summaryIndex === undefined || o.priorDepth + 1 <= o.maxDepth) return undefined;
  const total = o.tokens.reduce((a, b) => a + b, 0);
  const head = o.headIndices.reduce((a, i) => a + o.tokens[i]!, 0);
  const room = summaryRoom({ lo: o.lo, window: o.window, keptTokens: total - head });
  return o.tokens[o.summaryIndex]! <= room * CARRY_ROOM_SHARE ? o.summaryIndex : undefined;
}

export function planCompaction(snapshot: CompactionSnapshot, settings: CompactionSettings): CompactionPlan {
  const { context, tokens, split } = snapshot;
  const priorSummaries = split.headIndices.filter((i) => isSummaryMessage(context[i]!));
  const foldsSummary = priorSummaries.length > 0;
  const carried = carriedSummary({
    tokens,
    headIndices: split.headIndices,
    summaryIndex: priorSummaries[0],
    priorDepth: snapshot.priorDepth,
    maxDepth: settings.maxDepth,
    lo: settings.targetFraction ?? DEFAULT_TARGET_FRACTION,
    window: settings.contextWindow,
  });
  const overCap = carried !== undefined;
  const head = split.headIndices.filter((i) => i !== carried);
  const headTokens = head.reduce((s, i) => s + tokens[i]!, 0);
  const depth = !foldsSummary ? 1 : overCap ? snapshot.priorDepth : snapshot.priorDepth + 1;
  const replacedTokens = headTokens + (carried !== undefined ? tokens[carried]! : 0);
  const base = { snapshot, headTokens, replacedTokens, depth, carriedSummaryIndex: carried };
  if (head.length === 0) {
    const resolved = {
      ...settings,
      mode: settings.mode === 'auto' ? 'parallel' : settings.mode,
      layout: settings.layout === 'auto' ? 'cache-aligned' : settings.layout,
    } as ResolvedSettings;
    return {
      ...base,
      settings: resolved,
      blocks: [],
      summaryTokens: 0,
      workers: { targets: [], maxTokens: [], order: [], concurrency: 1 },
      choice: undefined,
    };
  }
  const { input, model } = plannerInput(snapshot, settings, head, overCap ? [] : priorSummaries, headTokens);
  const { work, choice } = planWork(input);
  const o = work.option;
  const blocks = o.mode === 'sequential' ? model.partition(Infinity) : model.partition(o.blockTokens);
  const resolved: ResolvedSettings = {
    ...settings,
    mode: o.mode,
    layout: o.layout,
    blockTokens: o.blockTokens,
    concurrency: o.concurrency,
  };
  return { ...base, settings: resolved, blocks, summaryTokens: input.summaryTokens, workers: workersOf(work), choice };
}

/** Head models per snapshot (snapshots are immutable) and head, so planning and the post-run prediction share one. */
const headModels = new WeakMap<CompactionSnapshot, Map<string, ReturnType<typeof headModel>>>();

/** What the planner is told about this head and these settings. */
function plannerInput(
  snapshot: CompactionSnapshot,
  settings: CompactionSettings,
  head: number[],
  priorSummaries: number[],
  headTokens: number,
) {
  const { context, tokens } = snapshot;
  const targetContextTokens = settings.targetContextTokens ?? TARGET_CONTEXT_TOKENS;
  // predictWritten asks again for the same head after the run; its salience scan is the costly part, so keep it.
  const key = JSON.stringify([head, priorSummaries, settings.verbosity, settings.focus ?? null, targetContextTokens]);
  let models = headModels.get(snapshot);
  if (!models) headModels.set(snapshot, (models = new Map()));
  let model = models.get(key);
  if (!model) {
    const { verbosity, focus } = settings;
    model = headModel({ context, tokens, head, priorSummaries, tools: snapshot.tools, verbosity, focus, targetContextTokens });
    models.set(key, model);
  }
  const total = tokens.reduce((a, b) => a + b, 0);
  const room = summaryRoom({
    lo: settings.targetFraction ?? DEFAULT_TARGET_FRACTION,
    window: settings.contextWindow,
    keptTokens: total - headTokens,
  });
  const input: PlannerInput = {
    head: model,
    summaryTokens:
      settings.summaryTokens ??
      summaryVolume({ headTokens, verbosity: settings.verbosity, room, priorTokens: priorSummaries.map((i) => tokens[i]!) }),
    profile: settings.profile ?? H100_7B,
    window: settings.contextWindow,
    cache: settings.cache ?? 'warm',
    replicas: settings.replicas ?? 1,
    maxConcurrency: settings.maxConcurrency ?? 64,
    forced: forcedOf(settings),
    ...(settings.background ? { background: settings.background } : {}),
    ...(settings.serverLoad ? { serverLoad: settings.serverLoad } : {}),
  };
  return { input, model };
}

/** After a run: the chosen plan's prediction had each block written what it did. */
export function predictWritten(plan: CompactionPlan, outputs: readonly number[]): number | undefined {
  if (!plan.choice) return undefined;
  const head = plan.blocks.flatMap((b) => b.messageIndices).filter((i, k, a) => a.indexOf(i) === k);
  const headTokens = head.reduce((s, i) => s + plan.snapshot.tokens[i]!, 0);
  const priors = plan.blocks.filter((b) => b.isPriorSummary).flatMap((b) => b.messageIndices);
  const { input } = plannerInput(plan.snapshot, plan.settings, head, priors, headTokens);
  return predictWithOutputs(input, plan.choice.chosen, plan.workers.order, outputs);
}

function workersOf(w: WorkPlan): WorkerPlan {
  return {
    targets: w.targets,
    maxTokens: w.maxTokens,
    order: w.order,
    concurrency: w.option.concurrency,
  };
}
