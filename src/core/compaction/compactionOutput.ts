import { isSummaryMessage, type ChatMessage } from '../messages';
import { orphanResultIndices, originalId } from '../session/sessionState';
import type { CompactionRecord } from '../session/schema';
import type { RecentTurnsResult } from '../splitPoint';
import { frameEnd } from '../splitPoint';
import { type BlockStats, type BlockView, type CompactionTotals, type PlanOutcome } from './events';
import { mergeSummaries, summaryMessage } from './merge';
import type { Block } from './partition';
import type { CompactionPlan } from './plan';
import { predictWritten } from './plan';

/** What a compaction produces once every block has a summary: the merged text, the context after, the record. */

export function mergedText(plan: CompactionPlan, blocks: readonly { block: Block; view: BlockView }[], focus: string | undefined): string {
  const ctx = plan.snapshot.context;
  const head = plan.snapshot.split.headIndices;
  const carried = plan.carriedSummaryIndex !== undefined ? (ctx[plan.carriedSummaryIndex]!.content ?? '') : undefined;
  return mergeSummaries(
    blocks.map((s) => ({ block: s.block, text: s.view.summary! })),
    {
      firstIndex: head[0] ?? 0,
      lastIndex: head[head.length - 1] ?? 0,
      messageCount: head.length,
      focus,
      carried,
      priorSummaries: head.filter((i) => isSummaryMessage(ctx[i]!)).length,
    },
  );
}

/** Why a summary is not adopted unasked: the agent loop's failure and the CLI's refusal say it alike. */
export function growsText(p: { summaryTokens(): number; plan: Pick<CompactionPlan, 'replacedTokens'> }): string {
  return `the summary (${p.summaryTokens()} tokens) is not smaller than the ${p.plan.replacedTokens} tokens it would replace`;
}

/** The merged summary's own words, without any block's: what a projection adds to the blocks before they are written. */
export function headingTokens(
  plan: CompactionPlan,
  blocks: readonly { block: Block; view: BlockView }[],
  focus: string | undefined,
  count: (m: ChatMessage) => number,
): number {
  const empty = blocks.map((s) => ({ block: s.block, view: { ...s.view, summary: '' } }));
  return count({ role: 'user', content: mergedText(plan, empty, focus) });
}

/**
 * Where the verbatim tail starts once the head and kept messages are taken
 * out: for contiguous strategies the split's tail start; for the
 * preserve-user-messages strategy, after the newest summarised or kept message.
 */
export function contiguousTailStart(plan: CompactionPlan): number {
  const split = plan.snapshot.split;
  // Both lists are ascending: their last elements are their maxima.
  const last = Math.max(-1, split.headIndices.at(-1) ?? -1, split.keptIndices.at(-1) ?? -1);
  return Math.max(last + 1, split.keptIndices.length > 0 ? 0 : split.tailStartIndex);
}

/** The context the agent would send after adoption: [system, pinned, kept…, summary, …tail]. */
export function projectedContext(plan: CompactionPlan, summary: string): ChatMessage[] {
  const ctx = plan.snapshot.context;
  const split = plan.snapshot.split;
  const out: ChatMessage[] = [
    ...ctx.slice(0, frameEnd(ctx)),
    ...split.keptIndices.map((i) => ctx[i]!),
    { role: 'user', content: summary },
    ...ctx.slice(contiguousTailStart(plan)),
  ];
  // As activeContext does after adoption: a result whose call was summarised is not sent.
  const orphans = new Set(orphanResultIndices(out));
  return orphans.size === 0 ? out : out.filter((_, i) => !orphans.has(i));
}

/**
 * The sum when every value is known, else undefined: cached tokens a server did not report are unknown, and with one
 * replica lacking prompt-token details the sum of the rest would be a part passed off as the whole.
 */
function knownSum(values: readonly (number | undefined)[]): number | undefined {
  let sum = 0;
  for (const v of values) {
    if (v === undefined) return undefined;
    sum += v;
  }
  return values.length > 0 ? sum : undefined;
}

/**
 * Each block's cached prompt tokens (undefined: not finished, or not known), gaps filled where the server's silence
 * means 0: vLLM's 2025 releases leave prompt-token details out of a reply's usage when nothing was cached, even with
 * --enable-prompt-tokens-details, so a server that reported a count for any worker of this compaction served the ones
 * whose usage came without one cold. A reply with no usage at all stays unknown, and so does a server that reported
 * no count (it may not report at all). Per endpoint: replicas are configured one by one.
 */
export function cachedTokensOf(stats: readonly (BlockStats | undefined)[]): (number | undefined)[] {
  const reporting = new Set<number>();
  for (const st of stats) if (st?.cachedTokens !== undefined) reporting.add(st.endpoint);
  return stats.map((st) => st && (st.cachedTokens ?? (st.usageReported && reporting.has(st.endpoint) ? 0 : undefined)));
}

export function totalsOf(
  plan: CompactionPlan,
  views: readonly BlockView[],
  o: { summaryTokens: number; wallMs: number; requests: number; maxInFlight: number },
): CompactionTotals {
  const sum = (f: (st: BlockStats) => number) => views.reduce((a, v) => a + (v.stats ? f(v.stats) : 0), 0);
  return {
    headTokens: plan.replacedTokens,
    summaryTokens: o.summaryTokens,
    inputTokens: sum((st) => st.inputTokens),
    outputTokens: sum((st) => st.outputTokens),
    cachedTokens: knownSum(cachedTokensOf(views.flatMap((v) => (v.stats ? [v.stats] : [])))),
    compressionRatio: o.summaryTokens > 0 ? plan.replacedTokens / o.summaryTokens : 0,
    wallMs: o.wallMs,
    requests: o.requests,
    maxInFlight: o.maxInFlight,
  };
}

/** The record adoption writes; ids point at the snapshot's stored originals. */
export function compactionRecord(
  plan: CompactionPlan,
  o: {
    id: string;
    now: number;
    text: string;
    summaryTokens: number;
    totals: CompactionTotals;
    blocks: number;
    edited: number;
    focus: string | undefined;
  },
): Omit<CompactionRecord, 'at'> {
  const ctx = plan.snapshot.context;
  const split = plan.snapshot.split;
  const t = o.totals;
  const tailStart = ctx[contiguousTailStart(plan)];
  const record: Omit<CompactionRecord, 'at'> = {
    id: o.id,
    summary: summaryMessage(`${o.id}_summary`, o.now, o.text, o.summaryTokens),
    // Ids name stored originals: a capped copy in the context stands for its original.
    tailStartId: tailStart ? originalId(tailStart.id) : null,
    keptIds: split.keptIndices.map((i) => originalId(ctx[i]!.id)),
    coveredIds: split.headIndices.map((i) => originalId(ctx[i]!.id)),
    lastSnapshotId: ctx.length > 0 ? originalId(ctx[ctx.length - 1]!.id) : null,
    strategy: plan.snapshot.strategy,
    depth: plan.depth,
    stats: {
      blocks: o.blocks,
      mode: plan.settings.mode,
      layout: plan.settings.layout,
      headTokens: t.headTokens,
      summaryTokens: t.summaryTokens,
      inputTokens: t.inputTokens,
      outputTokens: t.outputTokens,
      ...(t.cachedTokens !== undefined ? { cachedTokens: t.cachedTokens } : {}),
      compressionRatio: Math.round(t.compressionRatio * 100) / 100,
      wallMs: t.wallMs,
      edited: o.edited,
    },
  };
  if (o.focus) record.focus = o.focus;
  if ('overBudgetTurnStarts' in split && (split as RecentTurnsResult).overBudgetTurnStarts.length > 0)
    record.turnBudget = (split as RecentTurnsResult).turnBudget;
  return record;
}

/** The planner's prediction against a complete run's totals. */
export function planOutcome(plan: CompactionPlan, t: CompactionTotals, blocks: readonly BlockView[]): PlanOutcome | undefined {
  const c = plan.choice;
  if (!c) return undefined;
  const predicted = c.chosen.predictedMs;
  const outcome: PlanOutcome = {
    label: c.chosen.label,
    predictedMs: predicted,
    measuredMs: t.wallMs,
    ratio: predicted !== null ? Math.round((100 * t.wallMs) / predicted) / 100 : null,
    summaryTokens: t.outputTokens,
  };
  // Edited blocks were not written by a worker: there is nothing to replay; nor for an option never simulated.
  if (predicted !== null && blocks.every((b) => b.stats)) {
    const written = predictWritten(
      plan,
      blocks.map((b) => b.stats!.outputTokens),
    );
    if (written !== undefined) outcome.predictedForWrittenMs = written;
  }
  return outcome;
}
