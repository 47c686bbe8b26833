/**
 * Automatic prefix caching in the manner of vLLM v1's KV cache manager.
 *
 * - The prompt is cut into blocks of `blockSize` tokens; only full blocks are
 *   ever cached. Block i's hash chains the hash of block i-1 with block i's
 *   tokens, so a block is only reusable after an identical prefix.
 * - A hit is the longest run of leading blocks whose hashes are cached. As in
 *   vLLM, the last prompt token is always recomputed, so at most
 *   floor((n - 1) / blockSize) blocks can hit.
 * - A fixed pool of `capacityBlocks`. Blocks of running requests are pinned
 *   (ref count > 0). Freed blocks keep their hash and go to an LRU free queue;
 *   allocation takes from the front of that queue and evicts what was cached
 *   there. A request's blocks are freed in reverse order, so its tail goes
 *   first, as vLLM does.
 * - Registration: by default the full blocks of a request are registered
 *   (hash → block) when it is admitted, before they are computed, as vLLM v1
 *   does; a request admitted afterwards, even at the same instant, reuses
 *   them. `pessimistic` registers them only when the prefill has finished.
 */

export interface PrefixCacheOptions {
  blockSize?: number;
  capacityBlocks?: number;
  pessimistic?: boolean;
  /** false = no prefix caching (vLLM without --enable-prefix-caching). */
  enabled?: boolean;
}

export interface Admission {
  requestId: string;
  promptTokens: number;
  hitBlocks: number;
  /** hitBlocks * blockSize: the prompt tokens not prefilled. */
  cachedTokens: number;
  /** Blocks this request holds (hit + newly allocated, including a partial last block). */
  blocks: number[];
}

interface Held {
  blocks: number[];
  hashes: string[];
  /** Full blocks (by position) still to be registered (pessimistic mode). */
  pendingFrom: number;
}

export interface CacheStats {
  /** Sum of prompt tokens looked up (vllm:prefix_cache_queries). */
  queries: number;
  /** Sum of prompt tokens found cached (vllm:prefix_cache_hits). */
  hits: number;
  evictions: number;
  /** Blocks with a hash (reusable), pinned or free. */
  cachedBlocks: number;
  /** Blocks held by running requests. */
  usedBlocks: number;
  capacityBlocks: number;
}

export class PrefixCache {
  readonly blockSize: number;
  readonly capacityBlocks: number;
  readonly pessimistic: boolean;
  readonly enabled: boolean;
  private readonly ref: Int32Array;
  private readonly hashOf: (string | undefined)[];
  private readonly byHash = new Map<string, number>();
  /** Free blocks holding no hash: allocated first. */
  private readonly empty: number[] = [];
  /** Free blocks that still hold a cached hash, in LRU order (first = next evicted). */
  private readonly free = new Map<number, true>();
  private readonly held = new Map<string, Held>();
  private queries = 0;
  private hits = 0;
  private evictions = 0;

  constructor(opts: PrefixCacheOptions = {}) {
    this.blockSize = opts.blockSize ?? 16;
    this.capacityBlocks = opts.capacityBlocks ?? 16_384;
    this.pessimistic = opts.pessimistic ?? false;
    this.enabled = opts.enabled ?? true;
    this.ref = new Int32Array(this.capacityBlocks);
    this.hashOf = new Array(this.capacityBlocks).fill(undefined);
    for (let i = this.capacityBlocks - 1; i >= 0; i--) this.empty.push(i);
  }

  /**
   * Chained hashes of the full blocks of `tokens`: each block's hash is seeded
   * with the previous block's. Two independent 32-bit lanes (FNV-1a and a
   * murmur-style mix) make a 64-bit key, plenty for a simulator, and fast
   * enough to hash 100K-token prompts in about a millisecond.
   */
  blockHashes(tokens: number[]): string[] {
    const out: string[] = [];
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let start = 0; start + this.blockSize <= tokens.length; start += this.blockSize) {
      for (let i = start; i < start + this.blockSize; i++) {
        const t = tokens[i] | 0;
        a = Math.imul(a ^ (t & 0xffff), 0x01000193);
        a = Math.imul(a ^ (t >>> 16), 0x01000193);
        let k = Math.imul(t, 0xcc9e2d51);
        k = (k << 15) | (k >>> 17);
        b ^= Math.imul(k, 0x1b873593);
        b = (b << 13) | (b >>> 19);
        b = (Math.imul(b, 5) + 0xe6546b64) | 0;
      }
      out.push(`${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}`);
    }
    return out;
  }

  /** How many leading blocks would hit now (no side effects). */
  peekHitBlocks(tokens: number[]): number {
    return this.longestHit(this.blockHashes(tokens), tokens.length);
  }

  private longestHit(hashes: string[], numTokens: number): number {
    if (!this.enabled) return 0;
    const maxBlocks = Math.min(hashes.length, Math.floor(Math.max(0, numTokens - 1) / this.blockSize));
    let n = 0;
    while (n < maxBlocks && this.byHash.has(hashes[n])) n++;
    return n;
  }

  /** Blocks a new request needs beyond its hits. */
  blocksNeeded(tokens: number[]): number {
    const total = Math.ceil(tokens.length / this.blockSize);
    return total - this.peekHitBlocks(tokens);
  }

  /** Free blocks that can be allocated now (hit blocks sitting in the free queue are not counted twice by callers). */
  get freeBlocks(): number {
    return this.empty.length + this.free.size;
  }

  /** True if the request can be admitted without exceeding the pool. */
  canAdmit(tokens: number[]): boolean {
    const hashes = this.blockHashes(tokens);
    const hit = this.longestHit(hashes, tokens.length);
    // hit blocks that are currently free will be taken off the free queue, not allocated
    let freeHits = 0;
    for (let i = 0; i < hit; i++) if (this.ref[this.byHash.get(hashes[i])!] === 0) freeHits++;
    const need = Math.ceil(tokens.length / this.blockSize) - hit;
    return this.freeBlocks - freeHits >= need;
  }

  /**
   * Admits a request: takes its hit blocks, allocates the rest (evicting LRU
   * free blocks), and — unless pessimistic — registers its full blocks now.
   * If the pool is too small, the blocks that do not fit are simply not held
   * (and not cached).
   */
  admit(requestId: string, tokens: number[]): Admission {
    if (this.held.has(requestId)) throw new Error(`request ${requestId} already admitted`);
    const hashes = this.blockHashes(tokens);
    const hit = this.longestHit(hashes, tokens.length);
    const blocks: number[] = [];
    for (let i = 0; i < hit; i++) {
      const b = this.byHash.get(hashes[i])!;
      if (this.ref[b] === 0) this.free.delete(b);
      this.ref[b]++;
      blocks.push(b);
    }
    const total = Math.ceil(tokens.length / this.blockSize);
    for (let i = hit; i < total; i++) {
      const b = this.allocate();
      if (b === undefined) break;
      blocks.push(b);
    }
    const held: Held = { blocks, hashes, pendingFrom: hit };
    this.held.set(requestId, held);
    if (!this.pessimistic) this.register(held);
    this.queries += tokens.length;
    this.hits += hit * this.blockSize;
    return { requestId, promptTokens: tokens.length, hitBlocks: hit, cachedTokens: hit * this.blockSize, blocks: [...blocks] };
  }

  /** Pessimistic mode: the prefill finished, the request's full blocks become reusable. No-op otherwise. */
  prefillDone(requestId: string): void {
    const held = this.held.get(requestId);
    if (held && this.pessimistic) this.register(held);
  }

  /** The request finished or was aborted: its blocks go to the free queue, keeping their hashes. */
  release(requestId: string): void {
    const held = this.held.get(requestId);
    if (!held) return;
    this.held.delete(requestId);
    for (let i = held.blocks.length - 1; i >= 0; i--) {
      const b = held.blocks[i];
      this.ref[b]--;
      if (this.ref[b] === 0) {
        // A freed block without a hash holds nothing reusable: it is reused first.
        if (this.hashOf[b] === undefined) this.empty.push(b);
        else this.free.set(b, true);
      }
    }
  }

  private register(held: Held): void {
    if (!this.enabled) return;
    const full = Math.min(held.hashes.length, held.blocks.length);
    for (let i = held.pendingFrom; i < full; i++) {
      const h = held.hashes[i];
      if (this.byHash.has(h)) continue; // someone registered an identical block first
      const b = held.blocks[i];
      this.hashOf[b] = h;
      this.byHash.set(h, b);
    }
    held.pendingFrom = full;
  }

  private allocate(): number | undefined {
    const e = this.empty.pop();
    if (e !== undefined) {
      this.ref[e] = 1;
      return e;
    }
    const first = this.free.keys().next();
    if (first.done) return undefined;
    const b = first.value;
    this.free.delete(b);
    const h = this.hashOf[b];
    if (h !== undefined) {
      this.byHash.delete(h);
      this.hashOf[b] = undefined;
      this.evictions++;
    }
    this.ref[b] = 1;
    return b;
  }

  /**
   * Drops every cached hash (vLLM's /reset_prefix_cache), or refuses and returns false while any request holds
   * blocks, as vLLM's block pool does ("Failed to reset prefix cache because some blocks … are not freed yet").
   */
  reset(): boolean {
    for (let i = 0; i < this.capacityBlocks; i++) if (this.ref[i] > 0) return false;
    for (const b of this.byHash.values()) this.hashOf[b] = undefined;
    this.byHash.clear();
    for (const b of this.free.keys()) this.empty.push(b);
    this.free.clear();
    return true;
  }

  stats(): CacheStats {
    let used = 0;
    for (let i = 0; i < this.capacityBlocks; i++) if (this.ref[i] > 0) used++;
    return {
      queries: this.queries,
      hits: this.hits,
      evictions: this.evictions,
      cachedBlocks: this.byHash.size,
      usedBlocks: used,
      capacityBlocks: this.capacityBlocks,
    };
  }
}
