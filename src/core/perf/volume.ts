/**
 * How many summary tokens a compaction writes, and how they are shared out.
 * One total, set by the user's goal: the verbosity's compression of the head,
 * bounded by the room the target after compaction (`lo` of the window) leaves
 * once the tail, pins and frame are counted. The total is split across blocks
 * in proportion to their size, so sequential and parallel plans are compared
 * at the same volume; an earlier summary folded in again is first given a
 * floor (priorSummaryFloor), because it is already compressed.
 */
import type { Verbosity } from '../compaction/prompts';

/** Head tokens per summary token at each verbosity. */
export const COMPRESSION: Readonly<Record<Verbosity, number>> = { concise: 24, detailed: 12, 'very detailed': 6 };

/** No block is asked for fewer tokens than this: the sections alone need it. */
export const MIN_BLOCK_TARGET = 64;

export interface VolumeInput {
  headTokens: number;
  verbosity: Verbosity;
  /**
   * Tokens the summary may take so the context lands at `lo`: lo × window
   * minus the tail, pins, system prompt and merge framing. Undefined = no bound.
   */
  room: number | undefined;
}

export function summaryVolume(x: VolumeInput): number {
  const compression = COMPRESSION[x.verbosity] as number | undefined;
  // Settings and the CLI validate it; a caller of the core that does not would get a NaN volume, and the planner's
  // search over it would not end.
  if (compression === undefined) throw new Error(`unknown verbosity "${String(x.verbosity)}" (${Object.keys(COMPRESSION).join(', ')})`);
  return volumeAt(x.headTokens, compression, x.room);
}

/** The volume for a head at a compression (head tokens per summary token), within the room (the side bar's projection too). */
export function volumeAt(headTokens: number, compression: number, room: number | undefined): number {
  const wanted = Math.round(headTokens / compression);
  // Never ask for more than 40% of the head: that would not compress.
  const cap = Math.max(MIN_BLOCK_TARGET, Math.floor(0.4 * headTokens));
  const bound = room === undefined ? Infinity : Math.max(MIN_BLOCK_TARGET, Math.floor(room));
  return Math.max(Math.min(MIN_BLOCK_TARGET, headTokens), Math.min(wanted, cap, bound));
}

/** The room left for the summary when the context must land at `lo`. */
export function summaryRoom(o: { lo: number; window: number; keptTokens: number; overheadTokens?: number }): number {
  return o.lo * o.window - o.keptTokens - (o.overheadTokens ?? 200);
}

/**
 * Of an earlier summary re-summarised, the share kept at least. The verbosity's compression is for raw conversation:
 * applied again to a summary it compressed once, it compounds (12× then 12× again turned a standing rule in the
 * CONSTRAINTS of a 713-token summary into "none"). Half, not the whole: the new summary must still shrink the context,
 * and most of a head's volume belongs to the new conversation; a summary kept whole is what the depth cap is for
 * (carriesSummary). With the default cap of 3 the oldest layer keeps at least a quarter of its first summary before
 * it is carried verbatim.
 */
export const PRIOR_SUMMARY_KEEP = 0.5;

/** The fewest summary tokens asked for `tokens` of earlier summary: never more than it holds, nor below the sections' minimum. */
export function priorSummaryFloor(tokens: number): number {
  if (tokens <= 0) return 0;
  return Math.min(tokens, Math.max(MIN_BLOCK_TARGET, Math.ceil(PRIOR_SUMMARY_KEEP * tokens)));
}

/**
 * Splits `total` across blocks (largest remainder, so the parts add up), each at least MIN_BLOCK_TARGET.
 * `priorTokens[k]` is how much of block k is earlier summary: that part is reserved first, at its floor or at its
 * proportional share of the total if more, never above its size; the rest of the total goes to the blocks' other
 * tokens in proportion. When the floors alone pass the total (a small head, or a room at `lo` too tight for the
 * earlier summary), the floors win and each block's other tokens get MIN_BLOCK_TARGET: the parts add up to more
 * than the total, the context lands above `lo` by that much, and the rules the earlier summary carries survive.
 */
export function splitVolume(total: number, blockTokens: readonly number[], priorTokens?: readonly number[]): number[] {
  // Loops, not callbacks made per call: the planner calls this for every candidate plan, and V8 drops a per-call
  // callback's optimised code at each major collection, so every compaction would compile them again.
  const n = blockTokens.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += blockTokens[i]!;
  if (n === 0) return [];
  const parts = new Array<number>(n).fill(MIN_BLOCK_TARGET);
  if (sum <= 0) return parts;
  const prior = new Array<number>(n);
  const reserve = new Array<number>(n);
  let reserved = 0;
  let rawSum = 0;
  for (let i = 0; i < n; i++) {
    const t = blockTokens[i]!;
    const p = Math.max(0, Math.min(t, priorTokens?.[i] ?? 0));
    prior[i] = p;
    parts[i] = reserve[i] = p > 0 ? Math.min(p, Math.max(priorSummaryFloor(p), Math.floor((total * p) / sum))) : 0;
    reserved += parts[i]!;
    rawSum += t - p;
  }
  const share = Math.max(0, total - reserved);
  let left = rawSum > 0 ? share : 0;
  // A block with nothing raw sorts last and is never topped up: its part is its reserve.
  const rest = new Array<number>(n).fill(-1);
  for (let i = 0; rawSum > 0 && i < n; i++) {
    const raw = blockTokens[i]! - prior[i]!;
    if (raw <= 0) continue;
    const exact = (share * raw) / rawSum;
    const whole = Math.floor(exact);
    parts[i]! += whole;
    rest[i] = exact - whole;
    left -= whole;
  }
  // Largest remainder first, ties by position: the parts add up to the total.
  const order = Array.from(rest.keys()).sort(descendingBy.bind(rest));
  for (let k = 0; left > 0; k = (k + 1) % n, left--) parts[order[k]!]!++;
  // Raw tokens get at least the minimum above the block's reserve, so the sequential call's one block, holding the
  // earlier summary among the rest, is asked what the summary's block and the others would be in all.
  for (let i = 0; i < n; i++)
    if (blockTokens[i]! > prior[i]! || prior[i] === 0) parts[i] = Math.max(reserve[i]! + MIN_BLOCK_TARGET, parts[i]!);
  return parts;
}

/**
 * A sort comparator of indices, bound to the values they index: larger value first (sort is stable, so ties keep
 * their order). Module-level, not a callback made per call: V8 drops a per-call callback's optimised code at each
 * major collection, and the planner sorts once per candidate plan of every compaction.
 */
export function descendingBy(this: readonly number[], a: number, b: number): number {
  return this[b]! - this[a]!;
}

/** max_tokens for a worker asked for `target` tokens: room to finish the last section, not to ramble. */
export function maxTokensFor(target: number): number {
  return Math.ceil(target * 1.25) + 32;
}
