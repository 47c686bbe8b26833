import type { ChatMessage } from '../messages';
import { toWire } from '../messages';
import type { CompactionDeps } from '../compaction/pendingCompaction';
import { PendingCompaction } from '../compaction/pendingCompaction';
import type { CompactionPlan, CompactionSettings, CompactionSnapshot } from '../compaction/plan';
import { planCompaction } from '../compaction/plan';
import type { Layout, Verbosity } from '../compaction/prompts';
import { targetTokens } from '../compaction/prompts';
import { headFacts, headIndices } from './head';
import type { HeadFactOptions } from './head';
import { blockLookup, lossReport } from './loss';
import type { ProbeReport } from './probes';
import { runProbes, sampleFacts } from './probes';
import type { ReachReport, Tally } from './reach';
import { reachability } from './reach';
import type { Embedder } from './stability';
import { coefficientOfVariation, similarity } from './stability';
import { contextText, factsKeptIn } from './survival';
import type { Fact, FactKind, FactPosition, LossReport } from './types';
import { elapsedNow } from '../session/storage';

/**
 * `splitpoint eval`, the engine part: compacts one head under several
 * settings and measures what reaches the workers, what survives in the
 * summaries, how stable the summaries are, and whether the model can still
 * answer questions about the facts. Pure: the caller brings the model port.
 */
export type LayoutChoice = Layout | 'auto';

/**
 * 'planner': the total summary volume the planner sets from the verbosity
 * and the room after compaction, shared out by block size (block count does
 * not change it). 'per-block': the paper's model, where each block gets the
 * verbosity's target, so more blocks write more.
 */
export type VolumeModel = 'planner' | 'per-block';

export interface EvalOptions {
  /** Layouts measured at default settings ('auto' = the planner's choice). */
  layouts: readonly LayoutChoice[];
  /** Volume models of the block-size series. */
  volumes: readonly VolumeModel[];
  /** Block sizes for the survival-by-block-size series (at the default verbosity). */
  blockSizes: readonly number[];
  /** Verbosities for the survival-by-verbosity series (at the default block size). */
  verbosities: readonly Verbosity[];
  /** Layout of both series and of the stability runs. */
  seriesLayout: Layout;
  /** Block sizes at which each head is compacted twice for the stability measures. */
  stabilityBlockSizes: readonly number[];
  probes: number;
  facts?: HeadFactOptions;
}

export interface RunSurvival {
  total: number;
  kept: number;
  rate: number;
  byKind: Partial<Record<FactKind, Tally>>;
  byPosition: Partial<Record<FactPosition, Tally>>;
  byBlock: Array<{ block: number; total: number; kept: number }>;
}

export interface RunResult {
  /** What was asked ('auto' lets the planner choose) and what ran. */
  requestedLayout: LayoutChoice;
  layout: Layout;
  volume: VolumeModel;
  /** Summary tokens the plan asked for, in total. */
  summaryTarget: number;
  blockTokens: number;
  verbosity: Verbosity;
  blocks: number;
  headTokens: number;
  summaryTokens: number;
  outputTokens: number;
  wallMs: number;
  /** The reach report's totals, without the per-fact detail. */
  reach: Pick<ReachReport, 'total' | 'reached' | 'reachedOwnBlock' | 'byKind' | 'byPosition'>;
  survival: RunSurvival;
  pins: { total: number; kept: number };
  compression: { perBlock: number[]; cv: number };
}

export interface StabilityResult {
  blockTokens: number;
  cv: [number, number];
  /** Cosine between the two runs' merged summaries. */
  cosine: number;
  /** Mean cosine between the two runs' summaries of the same block. */
  blockCosineMean: number;
  method: 'embeddings' | 'tf-idf';
}

export interface EvalResult {
  head: {
    messages: number;
    tokens: number;
    facts: number;
    factsByKind: Partial<Record<FactKind, number>>;
    factsByPosition: Partial<Record<FactPosition, number>>;
  };
  defaults: RunResult[];
  loss: LossReport;
  /** One series per volume model. */
  byBlockSize: RunResult[][];
  byVerbosity: RunResult[];
  stability: StabilityResult[];
  probes: ProbeReport;
  wallMs: number;
}

export interface EvalDeps extends CompactionDeps {
  embed?: Embedder;
  progress?: (line: string) => void;
}

function tally<K extends string>(facts: readonly Fact[], key: (f: Fact) => K, hit: (f: Fact) => boolean): Partial<Record<K, Tally>> {
  const out: Partial<Record<K, Tally>> = {};
  for (const f of facts) {
    const t = (out[key(f)] ??= { total: 0, reached: 0 });
    t.total++;
    if (hit(f)) t.reached++;
  }
  return out;
}

function count<K extends string>(facts: readonly Fact[], key: (f: Fact) => K): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const f of facts) out[key(f)] = (out[key(f)] ?? 0) + 1;
  return out;
}

interface Run {
  result: RunResult;
  pending: PendingCompaction;
  plan: CompactionPlan;
  kept: Set<string>;
  reached: Set<string>;
}

/** The paper's volume: each block asks for the verbosity's target (at most 40 % of the block). */
function perBlockVolume(snapshot: CompactionSnapshot, settings: CompactionSettings): number {
  const blocks = planCompaction(snapshot, settings).blocks;
  return blocks.reduce((s, b) => s + targetTokens({ verbosity: settings.verbosity, blockTokens: b.tokens }), 0);
}

async function run(
  snapshot: CompactionSnapshot,
  asked: CompactionSettings,
  facts: readonly Fact[],
  deps: EvalDeps,
  volume: VolumeModel = 'planner',
): Promise<Run> {
  const settings = volume === 'per-block' ? { ...asked, summaryTokens: perBlockVolume(snapshot, asked) } : asked;
  const plan = planCompaction(snapshot, settings);
  const reach = reachability(plan, facts, deps.count);
  const pending = new PendingCompaction(plan, deps);
  const t0 = elapsedNow(deps.clock);
  await pending.start();
  if (!pending.isComplete()) {
    const failed = pending.blocks.filter((b) => b.status === 'failed');
    throw new Error(`${failed.length} of ${pending.blocks.length} blocks failed (first: block ${failed[0]?.index}: ${failed[0]?.error})`);
  }
  const wallMs = elapsedNow(deps.clock) - t0;
  const summaries = pending.blocks.map((b) => b.summary ?? '');
  const pins = facts.filter((f) => f.kind === 'pin');
  const others = facts.filter((f) => f.kind !== 'pin');
  // Workers keep facts in summaries; pins survive through the pinned block, so they are checked in the context after adoption.
  const kept = factsKeptIn(others, summaries);
  for (const id of factsKeptIn(pins, contextText(pending.projectedContext()))) kept.add(id);
  const owner = blockLookup(plan);
  const blocks = plan.blocks.map((b) => ({ block: b.index, total: 0, kept: 0 }));
  for (const f of others) {
    const b = owner(f.messageIndex);
    if (b === undefined) continue;
    blocks[b]!.total++;
    if (kept.has(f.id)) blocks[b]!.kept++;
  }
  const t = pending.totals();
  const perBlock = pending.blocks.map((b) => (b.stats && b.stats.outputTokens > 0 ? b.tokens / b.stats.outputTokens : 0));
  const result: RunResult = {
    requestedLayout: asked.layout,
    layout: plan.settings.layout,
    volume,
    summaryTarget: plan.summaryTokens,
    blockTokens: plan.settings.blockTokens,
    verbosity: settings.verbosity,
    blocks: plan.blocks.length,
    headTokens: plan.headTokens,
    summaryTokens: t.summaryTokens,
    outputTokens: t.outputTokens,
    wallMs,
    reach: {
      total: reach.total,
      reached: reach.reached,
      reachedOwnBlock: reach.reachedOwnBlock,
      byKind: reach.byKind,
      byPosition: reach.byPosition,
    },
    survival: {
      total: others.length,
      kept: others.filter((f) => kept.has(f.id)).length,
      rate: others.length === 0 ? 1 : others.filter((f) => kept.has(f.id)).length / others.length,
      byKind: tally(
        others,
        (f) => f.kind,
        (f) => kept.has(f.id),
      ),
      byPosition: tally(
        others,
        (f) => f.position,
        (f) => kept.has(f.id),
      ),
      byBlock: blocks,
    },
    pins: { total: pins.length, kept: pins.filter((f) => kept.has(f.id)).length },
    compression: { perBlock: perBlock.map((x) => Math.round(x * 100) / 100), cv: coefficientOfVariation(perBlock) },
  };
  deps.progress?.(
    `  ${asked.layout === 'auto' ? `auto → ${plan.settings.layout}` : plan.settings.layout}, B=${plan.settings.blockTokens}, ` +
      `${settings.verbosity}, ${volume} volume: ${plan.blocks.length} blocks, reach ${reach.reached}/${reach.total}, ` +
      `kept ${result.survival.kept}/${result.survival.total}, ${t.outputTokens} tokens out, ${wallMs} ms`,
  );
  return { result, pending, plan, kept, reached: reach.reachedIds };
}

export async function evaluate(
  snapshot: CompactionSnapshot,
  base: CompactionSettings,
  deps: EvalDeps,
  opts: EvalOptions,
): Promise<EvalResult> {
  const t0 = elapsedNow(deps.clock);
  const headPlan = planCompaction(snapshot, base);
  const facts = headFacts(headPlan, opts.facts);
  deps.progress?.(`head: ${headPlan.headTokens} tokens, ${facts.length} facts`);
  const cache = new Map<string, Run>();
  const get = async (layout: LayoutChoice, blockTokens: number, verbosity: Verbosity, volume: VolumeModel = 'planner'): Promise<Run> => {
    const k = `${layout}|${blockTokens}|${verbosity}|${volume}`;
    let r = cache.get(k);
    if (!r) {
      r = await run(snapshot, { ...base, layout, blockTokens, verbosity }, facts, deps, volume);
      cache.set(k, r);
    }
    return r;
  };
  const defaults: Run[] = [];
  for (const layout of opts.layouts) defaults.push(await get(layout, base.blockTokens, base.verbosity));
  const first = defaults[0]!;
  const loss = lossReport(facts, factsKeptIn(facts, contextText(first.pending.projectedContext())), {
    reached: first.reached,
    blockOfMessage: blockLookup(first.plan),
  });
  const byBlockSize: RunResult[][] = [];
  for (const volume of opts.volumes) {
    const series: RunResult[] = [];
    for (const b of opts.blockSizes) series.push((await get(opts.seriesLayout, b, base.verbosity, volume)).result);
    byBlockSize.push(series);
  }
  const byVerbosity: RunResult[] = [];
  const seriesBlock = opts.blockSizes.includes(4096) ? 4096 : (opts.blockSizes[0] ?? base.blockTokens);
  for (const v of opts.verbosities) byVerbosity.push((await get(opts.seriesLayout, seriesBlock, v)).result);
  const stability: StabilityResult[] = [];
  for (const b of opts.stabilityBlockSizes) {
    const a = await get(opts.seriesLayout, b, base.verbosity);
    const again = await run(snapshot, { ...base, layout: opts.seriesLayout, blockTokens: b }, facts, deps);
    const whole = await similarity(a.pending.summaryText(), again.pending.summaryText(), deps.embed);
    const perBlock = await Promise.all(
      a.pending.blocks.map((x, i) => similarity(x.summary ?? '', again.pending.blocks[i]?.summary ?? '', deps.embed)),
    );
    stability.push({
      blockTokens: b,
      cv: [a.result.compression.cv, again.result.compression.cv],
      cosine: whole.cosine,
      blockCosineMean: perBlock.reduce((s, x) => s + x.cosine, 0) / Math.max(1, perBlock.length),
      method: whole.method,
    });
  }
  const full: ChatMessage[] = snapshot.context.map(toWire);
  const sample = sampleFacts(facts, opts.probes, contextText(full).join('\n'));
  deps.progress?.(`probes: ${sample.length} questions, each with the full and the compacted context`);
  const probes = await runProbes(deps.model, sample, full, first.pending.projectedContext(), {
    ...(base.model ? { model: base.model } : {}),
    acquire: () => deps.limiter.acquire(),
  });
  return {
    head: {
      messages: headIndices(headPlan).length,
      tokens: headPlan.headTokens,
      facts: facts.length,
      factsByKind: count(facts, (f) => f.kind),
      factsByPosition: count(facts, (f) => f.position),
    },
    defaults: defaults.map((d) => d.result),
    loss,
    byBlockSize,
    byVerbosity,
    stability,
    probes,
    wallMs: elapsedNow(deps.clock) - t0,
  };
}
