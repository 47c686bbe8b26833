/**
 * How many summary tokens a compaction writes, and how they are shared out.
 * One total, set by the user's goal: the verbosity's compression of the head,
 * bounded by the room the target after compaction (`lo` of the window) leaves
 * once the tail, pins and frame are counted, but never below the tersest
 * verbosity's compression (ROOM_FLOOR_COMPRESSION). The total is split across
 * blocks in proportion to their size, none below MIN_BLOCK_TARGET, so that
 * sequential and parallel plans are compared at the same volume; an earlier
 * summary folded in again is first given a floor (priorSummaryFloor), because
 * it is already compressed.
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
  /** Tokens of each earlier summary in the head (re-compaction): each is asked for its floor, apart from the rest. */
  priorTokens?: readonly number[];
}

export function summaryVolume(x: VolumeInput): number {
  const compression = COMPRESSION[x.verbosity] as number | undefined;
  // Settings and the CLI validate it; a caller of the core that does not would get a NaN volume, and the planner's
  // search over it would not end.
  if (compression === undefined) throw new Error(`unknown verbosity "${String(x.verbosity)}" (${Object.keys(COMPRESSION).join(', ')})`);
  return volumeWithPriors(x.headTokens, x.priorTokens ?? [], compression, x.room);
}

/**
 * The volume of a head holding earlier summaries: each at its floor (priorSummaryFloor), and the new conversation at the
 * compression within what the room leaves once those floors are counted, never below head ÷ 24 of it. Taken out of
 * one total instead, the floors ate the new conversation's share: 9,000 new tokens got 128 (70×). The side bar's
 * projection uses the same sum.
 */
export function volumeWithPriors(
  headTokens: number,
  priorTokens: readonly number[],
  compression: number,
  room: number | undefined,
): number {
  let floors = 0;
  let prior = 0;
  for (const p of priorTokens) {
    floors += priorSummaryFloor(p);
    prior += p;
  }
  const raw = headTokens - prior;
  if (prior === 0) return volumeAt(headTokens, compression, room);
  return raw > 0 ? floors + volumeAt(raw, compression, room === undefined ? undefined : room - floors) : floors;
}

/**
 * The most head tokens per summary token the room at `lo` may impose: the concise verbosity's. A tail (kept user
 * messages, the last turns) can alone pass `lo`; the room was then negative and a 9,000-token head was asked for 64
 * tokens in all, for a context that still landed above `lo`. The floor is the tersest summary a user can ask for, and
 * it keeps the planner's comparison at one volume: at 24× every 1,536 head tokens hold one MIN_BLOCK_TARGET, so a plan
 * whose blocks average that much (the planner's smallest size is 2,048, and the partition closes blocks nearest it)
 * can be split at exactly the total. Continuous in the room: the summary shrinks as the tail grows, down to the floor.
 */
export const ROOM_FLOOR_COMPRESSION = COMPRESSION.concise;

/** The volume for a head at a compression (head tokens per summary token), within the room (the side bar's projection too). */
export function volumeAt(headTokens: number, compression: number, room: number | undefined): number {
  const wanted = Math.round(headTokens / compression);
  // Never ask for more than 40% of the head: that would not compress.
  const cap = Math.max(MIN_BLOCK_TARGET, Math.floor(0.4 * headTokens));
  const floor = Math.round(headTokens / ROOM_FLOOR_COMPRESSION);
  const bound = room === undefined ? Infinity : Math.max(MIN_BLOCK_TARGET, floor, Math.floor(room));
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
 * (carriedSummary in compaction/plan.ts). With the default cap of 3 the oldest layer keeps at least a quarter of its
 * first summary before it is carried verbatim, as long as it takes at most half the room.
 */
export const PRIOR_SUMMARY_KEEP = 0.5;

/** The fewest summary tokens asked for `tokens` of earlier summary: never more than it holds, nor below the sections' minimum. */
export function priorSummaryFloor(tokens: number): number {
  if (tokens <= 0) return 0;
  return Math.min(tokens, Math.max(MIN_BLOCK_TARGET, Math.ceil(PRIOR_SUMMARY_KEEP * tokens)));
}

/**
 * Splits `total` across blocks (largest remainder, so the parts add up), each at least MIN_BLOCK_TARGET.
 * `priorTokens[k]` is how much of block k is earlier summary: that part is reserved first, at its floor (which a total
 * from summaryVolume counts apart); the rest of the total goes to the blocks' other tokens in proportion, none below
 * MIN_BLOCK_TARGET. A block whose share would be below it is held at it and the
 * others share what is left, so the parts still add up to the total: the planner compares its plans at this total,
 * and a small last block raised after the split made every many-block plan ask for more than the sequential call.
 * When the floors alone pass the total (a small head, or a room at `lo` too tight for the earlier summary), the
 * floors win and each block's other tokens get MIN_BLOCK_TARGET: the parts add up to more than the total, the
 * context lands above `lo` by that much, and the rules the earlier summary carries survive.
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
  const raw = new Array<number>(n);
  const held = new Array<boolean>(n);
  let reserved = 0;
  let rawSum = 0;
  for (let i = 0; i < n; i++) {
    const t = blockTokens[i]!;
    const p = Math.max(0, Math.min(t, priorTokens?.[i] ?? 0));
    raw[i] = t - p;
    // An empty block still gets the minimum; a block of earlier summary alone gets its reserve and nothing more.
    // Exactly its floor: the total counts it apart (volumeWithPriors), and more of it would be the new work's share.
    parts[i] = p > 0 ? priorSummaryFloor(p) : t === 0 ? MIN_BLOCK_TARGET : 0;
    held[i] = t === p;
    reserved += parts[i]!;
    rawSum += t - p;
  }
  let share = total - reserved;
  // Holding a block at the minimum only lowers the others' share per token, so one pass that changes nothing is final.
  for (let changed = true; changed;) {
    changed = false;
    for (let i = 0; i < n; i++) {
      if (held[i] || share * raw[i]! >= MIN_BLOCK_TARGET * rawSum) continue;
      held[i] = changed = true;
      parts[i]! += MIN_BLOCK_TARGET;
      share -= MIN_BLOCK_TARGET;
      rawSum -= raw[i]!;
    }
  }
  // Every raw block held means the floors passed the total (share < 0): nothing is left to share.
  let left = rawSum > 0 ? share : 0;
  // A held block sorts last and is never topped up.
  const rest = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (held[i]) continue;
    const exact = (share * raw[i]!) / rawSum;
    const whole = Math.floor(exact);
    parts[i]! += whole;
    rest[i] = exact - whole;
    left -= whole;
  }
  // Largest remainder first, ties by position: the parts add up to the total.
  const order = Array.from(rest.keys()).sort(descendingBy.bind(rest));
  for (let k = 0; left > 0; k = (k + 1) % n, left--) parts[order[k]!]!++;
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
