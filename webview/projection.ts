/**
 * Pure token arithmetic for the timeline and the split handle. Everything a
 * drag step needs is O(log n) on prefix sums built once per message list, so
 * the gauges follow the handle without a host round trip.
 */
import {
  compactionOpen,
  formatTokens,
  splitVolume,
  summaryTokens,
  type CompactionView,
  summaryRoom,
  volumeWithPriors,
  type GaugeView,
  type SplitView,
  type ViewMessage,
} from '../src/protocol/messages';

export interface Prefix {
  /** all[i] = tokens of messages [0, i). Length n + 1. */
  all: Float64Array;
  /** head[i] = compactable tokens of messages [0, i): after the frame (SplitView.frameEnd, from the core's split plan), not kept. */
  head: Float64Array;
  total: number;
  /** Indices of earlier summaries (kind 'summary'), ascending: folded into a new summary, each keeps a floor. */
  summaries: readonly number[];
}

export function buildPrefix(messages: readonly ViewMessage[], split: SplitView | null): Prefix {
  const n = messages.length;
  const all = new Float64Array(n + 1);
  const head = new Float64Array(n + 1);
  const kept = split && split.keptIndices.length > 0 ? new Set(split.keptIndices) : null;
  // The host's split plan says where compactable messages start; the view does not re-derive it.
  const frameEnd = split?.frameEnd ?? n;
  const summaries: number[] = [];
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    if (m.kind === 'summary') summaries.push(i);
    const t = m.tokens > 0 ? m.tokens : 0;
    all[i + 1] = all[i]! + t;
    const compactable = i >= frameEnd && !(kept && kept.has(i));
    head[i + 1] = head[i]! + (compactable ? t : 0);
  }
  return { all, head, total: all[n]!, summaries };
}

export interface Projection {
  tailStartIndex: number;
  headTokens: number;
  blocks: number;
  /** The block size is the planner's to choose (blockTokens 0, "auto"): `blocks` assumes 4,096-token blocks. */
  blocksEstimated: boolean;
  summaryTokens: number;
  projected: number;
  /** head / summary; 0 when nothing would be compacted. */
  ratio: number;
  /**
   * 'compaction': the open compaction's own figures, the handle being at its split (what Adopt does); 'estimate': the
   * view's guess for the handle's place.
   */
  source: 'estimate' | 'compaction';
  /** The open compaction's summary is not all written yet: blocks still running count the volume the plan asked of them. */
  approximate: boolean;
}

/**
 * Projected context after compacting everything before `tail`: the head replaced by the summary volume the engine asks
 * for (src/core/perf/volume.ts), the head over the verbosity's compression within the room that lands the context at lo,
 * and each earlier summary in the head held at its floor, as the planner's split of that volume holds it.
 */
export function project(prefix: Prefix, gauge: GaugeView, split: SplitView, tail: number): Projection {
  const n = prefix.head.length - 1;
  const t = Math.max(0, Math.min(tail, n));
  const atChoice = t === split.tailStartIndex;
  // At the strategy's own split the head is the strategy's (SplitView.headEnd). A handle moved by hand makes the split
  // manual: everything from the frame up to it, kept user messages included.
  const headTokens = atChoice ? prefix.head[Math.min(split.headEnd, n)]! : prefix.all[t]! - prefix.all[Math.min(t, split.frameEnd)]!;
  // A summary at the depth cap is carried into the new one as it is: replaced, but not compressed.
  const c = split.carriedIndex;
  const carried = c !== null && c >= split.frameEnd && c < t && headTokens > 0 ? prefix.all[c + 1]! - prefix.all[c]! : 0;
  const compressed = Math.max(0, headTokens - carried);
  // Below the cap the engine folds every earlier summary in the head again (core/compaction/plan.ts); at it, none.
  const priors: number[] = [];
  if (c === null && compressed > 0) {
    for (const i of prefix.summaries) {
      const inHead = atChoice ? i < split.headEnd && prefix.head[i + 1]! > prefix.head[i]! : i >= split.frameEnd && i < t;
      if (inHead) priors.push(prefix.all[i + 1]! - prefix.all[i]!);
    }
  }
  const priorTokens = priors.reduce((a, b) => a + b, 0);
  const blockTokens = split.blockTokens > 0 ? split.blockTokens : 4096;
  // An earlier summary is never cut: it is a block of its own, whatever the size.
  const rawBlocks = Math.ceil((compressed - priorTokens) / blockTokens);
  const blocks = compressed > 0 ? priors.length + rawBlocks : 0;
  const room = summaryRoom({ lo: gauge.lo, window: gauge.window, keptTokens: gauge.used - compressed });
  const total = compressed > 0 ? volumeWithPriors(compressed, priors, split.compression, room) : 0;
  const written = priors.length > 0 ? writtenWithPriors(total, priors, compressed - priorTokens, rawBlocks) : total;
  const summaryTokens = written > 0 ? written + carried : 0;
  const projected = Math.max(0, gauge.used - compressed + written);
  const ratio = summaryTokens > 0 ? headTokens / summaryTokens : 0;
  const blocksEstimated = !(split.blockTokens > 0);
  return {
    tailStartIndex: t,
    headTokens,
    blocks,
    blocksEstimated,
    summaryTokens,
    projected,
    ratio,
    source: 'estimate',
    approximate: false,
  };
}

/**
 * What adopting the open compaction `c` leaves: what it replaces out, its merged summary in. Before every block is
 * written, the summary is the finished blocks' (a block being regenerated keeps its text until then), the merge's
 * headings, and for each block still running its share of the volume the plan asked for (`estimate`'s without a plan).
 */
export function compactionProjection(c: CompactionView, used: number, estimate: Projection): Projection {
  let summary: number;
  if (c.totals) summary = c.totals.summaryTokens;
  else {
    const head = c.blocks.reduce((a, b) => a + b.tokens, 0);
    const asked = c.plan?.chosen.summaryTokens ?? estimate.summaryTokens;
    summary = c.headingTokens ?? 0;
    for (const b of c.blocks) summary += summaryTokens(b)?.n ?? (head > 0 ? (asked * b.tokens) / head : 0);
    summary = Math.round(summary);
  }
  return {
    tailStartIndex: c.tailStartIndex ?? estimate.tailStartIndex,
    headTokens: c.headTokens,
    blocks: c.blocks.length,
    blocksEstimated: false,
    summaryTokens: summary,
    projected: Math.max(0, used - c.headTokens + summary),
    ratio: summary > 0 ? c.headTokens / summary : 0,
    source: 'compaction',
    approximate: !c.totals,
  };
}

/** The open compaction Adopt would apply at `tail`: planned on the context shown, split there. */
export function compactionAt(c: CompactionView | null, version: string, tail: number): CompactionView | null {
  if (!c || !compactionOpen(c) || c.blocks.length === 0) return null;
  return c.tailStartIndex === tail && (c.version === undefined || c.version === version) ? c : null;
}

/**
 * How a figure from `p` is marked: '≈' while the open compaction's blocks still run; ' est.' for the view's estimate
 * while a compaction is open elsewhere, so it is not read as what Adopt does. Nothing marks an estimate with no
 * compaction open, which is all the view can say then.
 */
export function projectionMarks(p: Projection, c: CompactionView | null): { approx: string; est: string } {
  const own = p.source === 'compaction';
  const open = !!c && compactionOpen(c) && c.blocks.length > 0;
  return { approx: own && p.approximate ? '≈' : '', est: !own && open ? ' est.' : '' };
}

/**
 * What the planner's split of `total` adds up to when the head holds earlier summaries: the engine's own splitVolume
 * over the blocks as the view can guess them (each earlier summary one, the rest in equal blocks), since a block held
 * at its minimum or a floor can make the parts pass the total.
 */
function writtenWithPriors(total: number, priors: readonly number[], raw: number, rawBlocks: number): number {
  const sizes = [...priors, ...Array.from({ length: rawBlocks }, () => raw / rawBlocks)];
  const prior = [...priors, ...Array.from({ length: rawBlocks }, () => 0)];
  return splitVolume(total, sizes, prior).reduce((a, b) => a + b, 0);
}

/** Index into the sorted `allowed` list of the entry nearest to `value` (by index). */
export function nearestAllowedByIndex(allowed: readonly number[], value: number): number {
  if (allowed.length === 0) return -1;
  let lo = 0;
  let hi = allowed.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (allowed[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(allowed[lo - 1]! - value) <= Math.abs(allowed[lo]! - value)) return lo - 1;
  return lo;
}

/** Index into `allowed` of the boundary whose token offset is nearest to `offset`. */
export function nearestAllowedByOffset(allowed: readonly number[], prefix: Prefix, offset: number): number {
  if (allowed.length === 0) return -1;
  const at = (k: number) => prefix.all[Math.min(allowed[k]!, prefix.all.length - 1)]!;
  let lo = 0;
  let hi = allowed.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(mid) < offset) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(at(lo - 1) - offset) <= Math.abs(at(lo) - offset)) return lo - 1;
  return lo;
}

/** The message whose span contains the token offset (clamped). */
export function messageAtOffset(prefix: Prefix, offset: number): number {
  const n = prefix.all.length - 1;
  if (n <= 0) return -1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (prefix.all[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Thresholds may arrive as fractions of the window (0.75) or as token counts; normalise to tokens. */
export function thresholdTokens(value: number, window: number): number {
  return value > 0 && value <= 1 ? value * window : value;
}

/** Cached prompt tokens as a count, or said to be unknown: a server that does not report them has not served 0. */
function formatCachedTokens(n: number | null): string {
  return n === null ? 'the server did not report how many' : formatTokens(n);
}

/**
 * What a compaction's workers sent and wrote, as the side bar's and the review editor's "Workers and cache" say it.
 * A worker's prompt is its block with instructions and whatever context its layout gives (the conversation up to the
 * block for cache-aligned workers, a little of it for target-block ones), so the text does not say which.
 */
export function workerTotalsText(t: { inputTokens: number; outputTokens: number; cachedTokens: number | null }): string {
  return (
    `Workers' prompts ${formatTokens(t.inputTokens)} tok in all, ${formatCachedTokens(t.cachedTokens)} from the prefix cache; ` +
    `wrote ${formatTokens(t.outputTokens)} tok`
  );
}

/** "+12 %" or "−8 %": how far a measured time fell from its prediction. */
export function deviation(measuredMs: number, predictedMs: number): string {
  const pct = Math.round((Math.abs(measuredMs - predictedMs) / Math.max(1, predictedMs)) * 100);
  return `${measuredMs >= predictedMs ? '+' : '−'}${pct} %`;
}
