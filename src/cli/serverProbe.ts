import { readVllmMetrics, type VllmMetrics } from '../llm/vllmMetrics';

/**
 * Server-side measurements for `bench`: vLLM's Prometheus prefix-cache
 * counters and its (dev-mode) cache reset. Both are optional on a real
 * server; callers report when they are missing instead of guessing.
 */
type PrefixCacheCounters = NonNullable<VllmMetrics['prefixCache']>;

export async function readPrefixCacheCounters(root: string): Promise<PrefixCacheCounters | undefined> {
  return (await readVllmMetrics(root))?.prefixCache;
}

/**
 * POST /reset_prefix_cache (vLLM serves it with VLLM_SERVER_DEV_MODE=1). Returns whether it worked. vLLM's block pool
 * refuses the reset while any request holds blocks, and some versions' route still answers 200: a server with
 * requests running (or waiting, which hold none yet but will) is taken as not reset, and not asked.
 */
export async function resetPrefixCache(root: string): Promise<boolean> {
  const m = await readVllmMetrics(root, { signal: AbortSignal.timeout(5000) });
  if ((m?.running ?? 0) + (m?.waiting ?? 0) > 0) return false;
  try {
    const res = await fetch(`${root}/reset_prefix_cache`, { method: 'POST' });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
