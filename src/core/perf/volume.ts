/**
 * How many summary tokens a compaction writes, and how they are shared out.
 * One total, set by the user's goal: the verbosity's compression of the head,
 * bounded by the room the target after compaction (`lo` of the window) leaves
 * once the tail, pins and frame are counted. The total is split across blocks
 * in proportion to their size, so sequential and parallel plans are compared
 * at the same volume.
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
 * Splits `total` across blocks in proportion to their tokens (largest
 * remainder, so the parts add up), each at least MIN_BLOCK_TARGET.
 */
export function splitVolume(total: number, blockTokens: readonly number[]): number[] {
  // Loops, not callbacks made per call: the planner calls this for every candidate plan, and V8 drops a per-call
  // callback's optimised code at each major collection, so every compaction would compile them again.
  const n = blockTokens.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += blockTokens[i]!;
  if (n === 0) return [];
  const parts = new Array<number>(n).fill(MIN_BLOCK_TARGET);
  if (sum <= 0) return parts;
  const rest = new Array<number>(n);
  let left = total;
  for (let i = 0; i < n; i++) {
    const exact = (total * blockTokens[i]!) / sum;
    parts[i] = Math.floor(exact);
    rest[i] = exact - parts[i]!;
    left -= parts[i]!;
  }
  // Largest remainder first, ties by position: the parts add up to the total.
  const order = Array.from(rest.keys()).sort(descendingBy.bind(rest));
  for (let k = 0; left > 0; k = (k + 1) % n, left--) parts[order[k]!]!++;
  for (let i = 0; i < n; i++) parts[i] = Math.max(MIN_BLOCK_TARGET, parts[i]!);
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
