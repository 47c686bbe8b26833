/**
 * The compaction planner: for the head at hand, the summary volume wanted,
 * the server's profile and limits, it predicts the wall time of each way to
 * compact (the sequential call, cache-aligned and target-block workers at
 * several block sizes and concurrencies) with the step model, and picks the
 * fastest. Cache-aligned workers prefill almost nothing when the agent's
 * prefix is cached but each holds its whole prefix while decoding, so many
 * of them make every step slow; target-block workers prefill their block
 * again but hold only it. In the background it also bounds how much the plan
 * slows the live agent's decoding.
 */
import type { PlanChoice, PlanOption } from '../compaction/events';
import type { Block } from '../compaction/partition';
import type { PerfProfile } from './profile';
import { isLoaded, otherSequences, type ServerLoad } from './serverLoad';
import type { SimRequest, SimResult } from './stepSim';
import { simulateSteps } from './stepSim';
import { descendingBy, maxTokensFor, splitVolume } from './volume';

export type PlanMode = 'parallel' | 'sequential';
export type PlanLayout = 'cache-aligned' | 'target-block';

/** One block as the partition would cut it at some block size. */
export interface BlockShape {
  /** Head tokens (local estimate), as the agent's context holds them. */
  tokens: number;
  /** What the target-block layout sends of it: pre-trimmed, with transcript framing. */
  transcriptTokens: number;
}

/** What the planner needs to know about the head; the compaction side builds it from the real partition. */
export interface HeadModel {
  headTokens: number;
  /** Tokens of the agent's request before the head (system prompt, tools, pins). */
  frameTokens: number;
  /** Tokens after the head in the agent's context (the tail). */
  tailTokens: number;
  /** The blocks the partition cuts at block size B (one block = the sequential call). */
  blocks(blockTokens: number): BlockShape[];
  /** Most tokens of earlier conversation a target-block worker carries before its block. */
  targetContextTokens: number;
  /** Instruction tokens a worker adds after its prompt, per layout. */
  instructionTokens: Record<PlanLayout, number>;
  /**
   * The partition's own blocks at B, in the order `blocks(B)` gives their shapes: which hold earlier summaries,
   * whose volume has a floor (priorSummaryFloor). A model without it has none in its head.
   */
  partition?(blockTokens: number): Block[];
}

export interface PlanForced {
  mode?: PlanMode;
  layout?: PlanLayout;
  blockTokens?: number;
  concurrency?: number;
}

export interface PlannerInput {
  head: HeadModel;
  /** Total summary tokens, whatever the plan (matched volume). */
  summaryTokens: number;
  profile: PerfProfile;
  /** The model's window: a worker's prompt plus max_tokens must fit. */
  window: number;
  /** Whether the agent's context is in the server's prefix cache. */
  cache: 'cold' | 'warm';
  /** Compaction endpoints; the first is the agent's. */
  replicas: number;
  /** Most workers in flight the user allows (the endpoint limiter). */
  maxConcurrency: number;
  /** Set when the live agent keeps decoding on the agent's server meanwhile. */
  background?: { maxSlowdown: number };
  /** Other clients' work on each compaction endpoint (the agent's first), read from the servers when planning. */
  serverLoad?: readonly (ServerLoad | undefined)[];
  forced?: PlanForced;
  /** Block sizes to try; defaults below. */
  blockSizes?: readonly number[];
}

/** A plan the engine can run: the option plus per-worker details. */
export interface WorkPlan {
  option: PlanOption;
  blockTokens: number;
  /** Summary tokens asked of each block, in block order. */
  targets: number[];
  maxTokens: number[];
  /** Block indices in the order they are sent. */
  order: number[];
}

export interface PlannerResult {
  choice: PlanChoice;
  work: WorkPlan;
}

export const DEFAULT_BLOCK_SIZES: readonly number[] = [2048, 4096, 8192, 16384, 32768];
const CONCURRENCIES: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/** Blocks smaller than this are not planned: too little for a worker to summarise. */
const MIN_PLANNED_BLOCK = 1024;
/** The system prompt of the target-block layout. */
const TARGET_SYSTEM_TOKENS = 60;

interface Candidate {
  mode: PlanMode;
  layout: PlanLayout;
  blockTokens: number;
  blocks: BlockShape[];
  /** Tokens of earlier summary in each block; undefined when the head holds none. */
  priorTokens: number[] | undefined;
  concurrency: number;
}

function candidates(x: PlannerInput): Candidate[] {
  const f = x.forced ?? {};
  const out: Candidate[] = [];
  const layouts: PlanLayout[] = f.layout ? [f.layout] : ['cache-aligned', 'target-block'];
  const others = (x.serverLoad ?? []).reduce((n, l) => n + otherSequences(l), 0);
  const cap = Math.min(x.maxConcurrency, x.profile.maxNumSeqs * Math.max(1, x.replicas) - (x.background ? 1 : 0) - others);
  const priors = earlierSummaries(x.head);
  if (f.mode !== 'parallel') {
    const one = x.head.blocks(Number.MAX_SAFE_INTEGER);
    const priorTokens = priorTokensOf(x.head, priors, Number.MAX_SAFE_INTEGER);
    for (const layout of layouts)
      out.push({ mode: 'sequential', layout, blockTokens: x.head.headTokens, blocks: one, priorTokens, concurrency: 1 });
  }
  if (f.mode === 'sequential') return out;
  const sizes = f.blockTokens
    ? [f.blockTokens]
    : (x.blockSizes ?? DEFAULT_BLOCK_SIZES).filter((b) => b >= MIN_PLANNED_BLOCK && b < x.head.headTokens);
  for (const B of sizes) {
    const blocks = x.head.blocks(B);
    if (blocks.length < 2 && !f.blockTokens) continue;
    const n = blocks.length;
    const priorTokens = priorTokensOf(x.head, priors, B);
    const concs = f.concurrency
      ? [Math.min(f.concurrency, n)]
      : [...new Set([...CONCURRENCIES.filter((c) => c < n), n].map((c) => Math.min(c, cap)))];
    for (const layout of layouts)
      for (const concurrency of concs)
        out.push({ mode: 'parallel', layout, blockTokens: B, blocks, priorTokens, concurrency: Math.max(1, concurrency) });
  }
  return out;
}

/** Tokens of each earlier summary in the head, by conversation index; undefined when there is none. */
function earlierSummaries(head: HeadModel): Map<number, number> | undefined {
  if (!head.partition || head.headTokens <= 1) return undefined;
  // Every partition below the whole head gives each earlier summary a block of its own, the same at any size; the
  // largest such size cuts the fewest blocks. The whole head is one unflagged block, so it cannot say.
  let found: Map<number, number> | undefined;
  for (const b of head.partition(head.headTokens - 1)) {
    if (b.isPriorSummary) (found ??= new Map()).set(b.messageIndices[0]!, b.tokens);
  }
  return found;
}

/** How much of each block at size B is earlier summary: the sequential call's one block holds it among the rest. */
function priorTokensOf(head: HeadModel, priors: ReadonlyMap<number, number> | undefined, B: number): number[] | undefined {
  if (!priors || !head.partition) return undefined;
  const blocks = head.partition(B);
  const out = new Array<number>(blocks.length).fill(0);
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k]!;
    // An earlier summary is never cut into parts; a part is of a raw message.
    if (!b.part) for (const i of b.messageIndices) out[k]! += priors.get(i) ?? 0;
  }
  return out;
}

function label(c: Candidate): string {
  if (c.mode === 'sequential') return `sequential ${c.layout}`;
  return `${c.layout} ${c.blockTokens} ×${c.blocks.length}${c.concurrency < c.blocks.length ? ` (${c.concurrency} at once)` : ''}`;
}

/** The requests a candidate sends, as the step model sees them. */
export function candidateRequests(x: PlannerInput, c: Pick<Candidate, 'layout' | 'blocks'>, targets: readonly number[]): SimRequest[] {
  let cum = x.head.frameTokens;
  return c.blocks.map((b, k) => {
    const before = cum - x.head.frameTokens;
    cum += b.tokens;
    const out = targets[k]!;
    if (c.layout === 'cache-aligned')
      return { promptTokens: cum + x.head.instructionTokens['cache-aligned'], sharedTokens: cum, outputTokens: out, replica: 0 };
    const context = Math.min(before, x.head.targetContextTokens);
    return {
      promptTokens: TARGET_SYSTEM_TOKENS + context + b.transcriptTokens + x.head.instructionTokens['target-block'],
      sharedTokens: 0,
      outputTokens: out,
    };
  });
}

/** Block indices in sending order: the largest first when not all go at once (longest processing time first). */
function dispatchOrder(c: Candidate, targets: readonly number[]): number[] {
  const ids = Array.from(targets.keys());
  if (c.layout === 'cache-aligned' || c.concurrency >= c.blocks.length) return ids;
  return ids.sort(descendingBy.bind(targets));
}

function evaluate(x: PlannerInput, c: Candidate): WorkPlan {
  const n = c.blocks.length;
  const sizes = new Array<number>(n);
  for (let k = 0; k < n; k++) sizes[k] = c.blocks[k]!.tokens;
  // The same targets the workers are sent (plan.ts's workersOf), so the prediction is of what runs.
  const targets = splitVolume(x.summaryTokens, sizes, c.priorTokens);
  const maxTokens = targets.map(maxTokensFor);
  const order = dispatchOrder(c, targets);
  const reqs = candidateRequests(x, c, targets);
  let summaryTokens = 0;
  let tooBig = -1;
  for (let k = 0; k < n; k++) {
    summaryTokens += targets[k]!;
    if (tooBig < 0 && reqs[k]!.promptTokens + maxTokens[k]! > x.window) tooBig = k;
  }
  const option: PlanOption = {
    label: label(c),
    mode: c.mode,
    layout: c.layout,
    blockTokens: c.blockTokens,
    blocks: n,
    concurrency: c.concurrency,
    summaryTokens,
    predictedMs: null,
  };
  if (tooBig >= 0) {
    option.excluded = `worker ${tooBig + 1}'s prompt (${reqs[tooBig]!.promptTokens} tokens) and reply do not fit the ${x.window}-token window`;
    return { option, blockTokens: c.blockTokens, targets, maxTokens, order };
  }
  const sim = simulateCandidate(x, c, reqs, order);
  option.predictedMs = Math.round(sim.wallMs);
  if (x.background && sim.agentTpotMs !== undefined && sim.agentAloneTpotMs) {
    option.agentSlowdown = Math.round((100 * sim.agentTpotMs) / sim.agentAloneTpotMs) / 100;
    if (option.agentSlowdown > x.background.maxSlowdown)
      option.excluded = `slows the agent ${option.agentSlowdown}× (limit ${x.background.maxSlowdown}×)`;
  }
  return { option, blockTokens: c.blockTokens, targets, maxTokens, order };
}

function simulateCandidate(x: PlannerInput, c: Pick<Candidate, 'concurrency'>, reqs: SimRequest[], order: number[]): SimResult {
  const agentKv = x.head.frameTokens + x.head.headTokens + x.head.tailTokens;
  return simulateSteps(reqs, {
    profile: x.profile,
    order,
    concurrency: c.concurrency,
    replicas: Math.max(1, x.replicas),
    warmSharedTokens: x.cache === 'warm' ? agentKv : 0,
    ...(x.background ? { agentKvTokens: agentKv } : {}),
    ...(x.serverLoad?.some(isLoaded) ? { load: x.serverLoad } : {}),
  });
}

/**
 * The wall time the step model gives a plan that ran with these output
 * tokens per block: after a run, it tells timing error from volume error
 * (a model that wrote less than it was asked finishes sooner).
 */
export function predictWithOutputs(x: PlannerInput, option: PlanOption, order: number[], outputs: readonly number[]): number {
  const blocks = option.mode === 'sequential' ? x.head.blocks(Number.MAX_SAFE_INTEGER) : x.head.blocks(option.blockTokens);
  const reqs = candidateRequests(
    x,
    { layout: option.layout, blocks },
    outputs.map((o) => Math.max(1, o)),
  );
  return Math.round(simulateCandidate(x, option, reqs, order).wallMs);
}

/** Sort order by predicted time; options without one (never simulated) last. */
function fasterFirst(a: PlanOption, b: PlanOption): number {
  if (a.predictedMs === null || b.predictedMs === null) return (a.predictedMs === null ? 1 : 0) - (b.predictedMs === null ? 1 : 0);
  return a.predictedMs - b.predictedMs;
}

/** Predicts every candidate and returns the fastest one allowed, with the rest as alternatives. */
export function planWork(x: PlannerInput): PlannerResult {
  const all = candidates(x).map((c) => evaluate(x, c));
  if (all.length === 0)
    throw new Error('The planner found nothing to consider: the head is empty or the forced settings rule out every plan.');
  const byTime = (a: WorkPlan, b: WorkPlan) => fasterFirst(a.option, b.option) || a.option.blocks - b.option.blocks;
  const allowed = all.filter((w) => !w.option.excluded).sort(byTime);
  // When every option breaks the agent's bound, the gentlest one still runs: a compaction has to happen.
  const gentlest = [...all]
    .filter((w) => w.option.predictedMs !== null)
    .sort((a, b) => (a.option.agentSlowdown ?? 0) - (b.option.agentSlowdown ?? 0) || byTime(a, b));
  const work = allowed[0] ?? gentlest[0] ?? all[0]!;
  const alternatives = all.filter((w) => w !== work).map((w) => w.option);
  alternatives.sort((a, b) => (a.excluded ? 1 : 0) - (b.excluded ? 1 : 0) || fasterFirst(a, b));
  const f = x.forced ?? {};
  const forced = (Object.keys(f) as (keyof PlanForced)[]).filter((k) => f[k] !== undefined).map((k) => `${k}=${f[k]}`);
  return {
    work,
    choice: {
      chosen: work.option,
      alternatives,
      profile: { name: x.profile.name, source: x.profile.source },
      cache: x.cache,
      background: x.background !== undefined,
      replicas: Math.max(1, x.replicas),
      forced,
      ...(x.serverLoad?.some(isLoaded) ? { serverLoad: x.serverLoad.map((l) => (isLoaded(l) ? l : null)) } : {}),
    },
  };
}
