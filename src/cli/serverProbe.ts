/**
 * Server-side measurements for `bench`: vLLM's Prometheus prefix-cache
 * counters and its (dev-mode) cache reset. Both are optional on a real
 * server; callers report when they are missing instead of guessing.
 */
export interface PrefixCacheCounters {
  queries: number;
  hits: number;
}

export async function readPrefixCacheCounters(root: string): Promise<PrefixCacheCounters | undefined> {
  try {
    const res = await fetch(`${root}/metrics`);
    if (!res.ok) return undefined;
    const text = await res.text();
    const sum = (name: string): number | undefined => {
      let total: number | undefined;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name)) continue;
        const rest = line.slice(name.length);
        if (rest[0] !== ' ' && rest[0] !== '{') continue;
        const v = Number(rest.trim().split(/\s+/).pop());
        if (Number.isFinite(v)) total = (total ?? 0) + v;
      }
      return total;
    };
    const queries = sum('vllm:prefix_cache_queries_total') ?? sum('vllm:gpu_prefix_cache_queries_total');
    const hits = sum('vllm:prefix_cache_hits_total') ?? sum('vllm:gpu_prefix_cache_hits_total');
    return queries === undefined || hits === undefined ? undefined : { queries, hits };
  } catch {
    return undefined;
  }
}

/** POST /reset_prefix_cache (vLLM serves it with VLLM_SERVER_DEV_MODE=1). Returns whether it worked. */
export async function resetPrefixCache(root: string): Promise<boolean> {
  try {
    const res = await fetch(`${root}/reset_prefix_cache`, { method: 'POST' });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
