/**
 * A token counter over cl100k-style BPE ranks whose cost is bounded per input.
 *
 * js-tiktoken's merge is quadratic in the length of one pre-tokenised piece,
 * with a large constant (it joins byte arrays into strings for every pair on
 * every pass): a 10,000-dot line took 24 s. Here short pieces use the same
 * simple loop on reused arrays, and long ones an equivalent merge over a
 * linked list and a heap, O(n log n), with the same choice at every step, so
 * counts equal js-tiktoken's. As a last bound, a piece longer than
 * MAX_PIECE_BYTES is cut and each part merged on its own; a cut can only stop
 * merges across it, so such a piece may count a few tokens more than exactly
 * (tests hold it within 1 %). No prose or code has pieces that long.
 */

/** Longest piece merged whole, in UTF-8 bytes. */
export const MAX_PIECE_BYTES = 16_384;

/** Identifies what produced a stored count; counts from another counter are not reused. */
export const COUNTER_ID = 'cl100k/bounded-16k';

export interface BpeRanks {
  pat_str: string;
  bpe_ranks: string;
}

const NO_RANK = Number.MAX_SAFE_INTEGER;
/** Pieces up to this many bytes use tiktoken's simple quadratic loop; longer ones the heap. */
const LINEAR_MERGE_BYTES = 48;
/** Pieces remembered with their counts; words repeat a lot, so this saves most merges. */
const PIECE_CACHE_LIMIT = 50_000;

export class BoundedBpeCounter {
  private readonly ranks: Map<string, number> = new Map();
  private readonly pattern: RegExp;
  private readonly pieceCache = new Map<string, number>();
  /** Ranks of every two-byte token by (first << 8 | second): most lookups are pairs of bytes, and hashing fresh strings is the cost. */
  private readonly pairs = new Float64Array(65536).fill(NO_RANK);
  private readonly memo: PairMemo = { pairs: new Map(), byte: new Int32Array(256) };
  private readonly heapMerger: HeapMerger;
  /** Scratch for mergeLinear, reused across pieces. */
  private readonly starts = new Int32Array(LINEAR_MERGE_BYTES + 1);
  private readonly rank = new Float64Array(LINEAR_MERGE_BYTES + 1);

  constructor(data: BpeRanks, ranks?: Map<string, number>) {
    this.pattern = new RegExp(data.pat_str, 'gu');
    if (ranks) this.ranks = ranks;
    else for (const _ of fillRanks(data, this.ranks));
    for (const [bytes, rank] of this.ranks) {
      if (bytes.length === 2) this.pairs[(bytes.charCodeAt(0) << 8) | bytes.charCodeAt(1)] = rank;
      else if (bytes.length === 1) this.memo.byte[bytes.charCodeAt(0)] = rank;
    }
    this.heapMerger = new HeapMerger(this.ranks, this.pairs, this.memo);
    if (this.ranks.size >= ID_SCALE) throw new Error(`a tokenizer with ${this.ranks.size} tokens is more than this counter handles`);
  }

  /**
   * Builds the counter with a pause every few thousand ranks: decoding all
   * 100K of them takes 100–250 ms, too long to hold an editor's thread in one go.
   */
  static async load(data: BpeRanks, pause: () => Promise<void>): Promise<BoundedBpeCounter> {
    const ranks = new Map<string, number>();
    for (const _ of fillRanks(data, ranks)) await pause();
    return new BoundedBpeCounter(data, ranks);
  }

  /** Drops the remembered pieces (benchmarks use it to time first counts again). */
  forgetPieces(): void {
    this.pieceCache.clear();
  }

  /** Tokens in the text; special-token look-alikes count as ordinary text. Never throws. */
  count(text: string): number {
    if (text.length === 0) return 0;
    let n = 0;
    // match() with the g flag gives the pieces as strings: no match object (and no iterator result) per piece.
    const pieces = text.match(this.pattern);
    if (pieces) for (let i = 0; i < pieces.length; i++) n += this.countPiece(pieces[i]!);
    return n;
  }

  private countPiece(piece: string): number {
    // Most pieces of ordinary text are one token; ASCII pieces are their own key.
    const bytes = toBinaryString(piece);
    const whole = this.ranks.get(bytes);
    if (whole !== undefined) return 1;
    const cached = this.pieceCache.get(bytes);
    if (cached !== undefined) return cached;
    let n = 0;
    for (let at = 0; at < bytes.length; at += MAX_PIECE_BYTES)
      n += this.merge(bytes.length <= MAX_PIECE_BYTES ? bytes : bytes.slice(at, at + MAX_PIECE_BYTES));
    if (this.pieceCache.size >= PIECE_CACHE_LIMIT) this.pieceCache.clear();
    this.pieceCache.set(bytes, n);
    return n;
  }

  /** The number of tokens byte-pair merging leaves of s (tiktoken's rule: lowest rank first, leftmost on ties). */
  private merge(s: string): number {
    if (s.length <= 1 || this.ranks.has(s)) return 1;
    return s.length <= LINEAR_MERGE_BYTES ? this.mergeLinear(s) : this.heapMerger.merge(s);
  }

  /** tiktoken's own loop, on reused arrays; fastest for the short pieces that make up nearly all text. */
  private mergeLinear(s: string): number {
    // starts[k] is where part k begins; rank[k] the rank of part k joined with part k + 1.
    const starts = this.starts;
    const rank = this.rank;
    let parts = s.length;
    for (let i = 0; i <= parts; i++) starts[i] = i;
    for (let i = 0; i < parts - 1; i++) rank[i] = this.pairs[(s.charCodeAt(i) << 8) | s.charCodeAt(i + 1)]!;
    rank[parts - 1] = NO_RANK;
    for (;;) {
      let best = NO_RANK;
      let at = -1;
      for (let k = 0; k < parts; k++) {
        if (rank[k]! < best) {
          best = rank[k]!;
          at = k;
        }
      }
      if (at < 0) break;
      starts.copyWithin(at + 1, at + 2, parts + 1);
      rank.copyWithin(at + 1, at + 2, parts);
      parts--;
      rank[at] = at + 2 <= parts ? this.rankOf(s, starts[at]!, starts[at + 2]!) : NO_RANK;
      if (at > 0) rank[at - 1] = this.rankOf(s, starts[at - 1]!, starts[at + 1]!);
    }
    return parts;
  }

  private rankOf(s: string, from: number, to: number): number {
    if (to - from === 2) return this.pairs[(s.charCodeAt(from) << 8) | s.charCodeAt(from + 1)]!;
    return this.ranks.get(s.slice(from, to)) ?? NO_RANK;
  }
}

/**
 * The same merge in O(n log n): parts form a linked list over byte offsets and
 * candidate pairs wait in a min-heap keyed by (rank, start), so "lowest rank,
 * leftmost" pops first, exactly as the linear scan picks. An entry is stale
 * when its part has gone or its pair's rank has changed since; it is skipped.
 * The arrays are reused across pieces (no piece is longer than MAX_PIECE_BYTES).
 */
class HeapMerger {
  private readonly next = new Int32Array(MAX_PIECE_BYTES + 1);
  private readonly prev = new Int32Array(MAX_PIECE_BYTES + 1);
  /** The token each part is (a rank is a token id), so a pair's rank is remembered by two ids, not by hashing a fresh slice. */
  private readonly id = new Int32Array(MAX_PIECE_BYTES + 1);
  private readonly alive = new Uint8Array(MAX_PIECE_BYTES + 1);
  private readonly rank = new Float64Array(MAX_PIECE_BYTES + 1);
  private readonly heap = new MinHeap(MAX_PIECE_BYTES * 2);
  private s = '';
  private n = 0;

  constructor(
    private readonly ranks: ReadonlyMap<string, number>,
    private readonly pairs: Float64Array,
    private readonly memo: PairMemo,
  ) {}

  merge(s: string): number {
    const n = s.length;
    this.s = s;
    this.n = n;
    const { next, prev, id, alive, rank, heap } = this;
    heap.size = 0;
    for (let i = 0; i <= n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      alive[i] = 1;
      rank[i] = NO_RANK;
      if (i < n) id[i] = this.memo.byte[s.charCodeAt(i)]!;
    }
    for (let k = 0; k < n - 1; k++) this.update(k);
    let parts = n;
    while (heap.size > 0) {
      const key = heap.pop();
      const k = key % KEY_SCALE;
      const r = (key - k) / KEY_SCALE;
      if (!alive[k] || rank[k] !== r) continue;
      const gone = next[k]!;
      alive[gone] = 0;
      next[k] = next[gone]!;
      prev[next[k]!] = k;
      id[k] = r;
      parts--;
      this.update(k);
      if (k > 0) this.update(prev[k]!);
    }
    return parts;
  }

  private update(k: number): void {
    const r = this.rankAt(k);
    this.rank[k] = r;
    if (r !== NO_RANK) this.heap.push(r * KEY_SCALE + k);
  }

  private rankAt(k: number): number {
    const b = this.next[k]!;
    if (b >= this.n) return NO_RANK;
    const end = this.next[b]!;
    const s = this.s;
    if (end - k === 2) return this.pairs[(s.charCodeAt(k) << 8) | s.charCodeAt(k + 1)]!;
    const key = this.id[k]! * ID_SCALE + this.id[b]!;
    let r = this.memo.pairs.get(key);
    if (r === undefined) {
      r = this.ranks.get(s.slice(k, end)) ?? NO_RANK;
      if (this.memo.pairs.size >= PAIR_MEMO_LIMIT) this.memo.pairs.clear();
      this.memo.pairs.set(key, r);
    }
    return r;
  }
}

/** Pair ranks remembered by token ids, and each byte's own token id. */
interface PairMemo {
  pairs: Map<number, number>;
  byte: Int32Array;
}

/** Token ids are below 2^17 in cl100k (100,277 of them). */
const ID_SCALE = 2 ** 17;
const PAIR_MEMO_LIMIT = 1_000_000;

const KEY_SCALE = 2 ** 32;

/** A binary min-heap of numbers, sized for at most `capacity` live entries plus re-pushes. */
class MinHeap {
  private data: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.data = new Float64Array(Math.max(16, capacity * 2));
  }

  push(v: number): void {
    if (this.size === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    const d = this.data;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (d[p]! <= v) break;
      d[i] = d[p]!;
      i = p;
    }
    d[i] = v;
  }

  pop(): number {
    const d = this.data;
    const top = d[0]!;
    const last = d[--this.size]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && d[c + 1]! < d[c]!) c++;
      if (d[c]! >= last) break;
      d[i] = d[c]!;
      i = c;
    }
    d[i] = last;
    return top;
  }
}

/** Ranks per slice of a pausing build: about 5 ms of decoding. */
const RANKS_PER_SLICE = 4096;

/**
 * Decodes the ranks into the map. Keys are "binary strings": one char per
 * byte (what atob yields), so an ASCII piece is its own key and no byte
 * arrays are built per lookup. Yields after every slice.
 */
function* fillRanks(data: BpeRanks, ranks: Map<string, number>): Generator<void> {
  // Each line is "<ignored> <first rank> <base64 token> <base64 token> …"; cl100k has one
  // line of 100K tokens, walked with indexOf so no 100K-element array is built at once.
  const text = data.bpe_ranks;
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const first = text.indexOf(' ', lineStart);
    const second = first < 0 || first >= lineEnd ? -1 : text.indexOf(' ', first + 1);
    if (second > 0 && second < lineEnd) {
      let rank = Number.parseInt(text.slice(first + 1, second), 10);
      let at = second + 1;
      while (at < lineEnd) {
        let end = text.indexOf(' ', at);
        if (end < 0 || end > lineEnd) end = lineEnd;
        if (end > at) ranks.set(atob(text.slice(at, end)), rank++);
        at = end + 1;
        if (rank % RANKS_PER_SLICE === 0) yield;
      }
    }
    lineStart = lineEnd + 1;
  }
}

/** UTF-8 bytes of s as one char per byte; lone surrogates become U+FFFD, as TextEncoder does. */
export function toBinaryString(s: string): string {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return s;
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  let r = '';
  for (let i = 0; i < out.length; i += 8192) r += String.fromCharCode(...out.slice(i, i + 8192));
  return r;
}
