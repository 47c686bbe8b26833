/**
 * vLLM's Prometheus /metrics, read for the planner: how many requests run and
 * wait, KV usage, and the server-side TTFT and TPOT histograms (their sums
 * and counts; differences between two reads give the means over an interval,
 * free of network time), and the prefix cache's counters for `bench` and the
 * connection check. Every field is optional: servers differ by version.
 *
 * Names move between vLLM versions, so each field lists the current name
 * first and the older ones after it. The time between decoded tokens is
 * `vllm:inter_token_latency_seconds` since v0.11; its old name,
 * `vllm:time_per_output_token_seconds`, was hidden in v0.12 and removed in
 * January 2026 (vLLM PR #32661), so a current server exports only the new one. KV usage was
 * `vllm:gpu_cache_usage_perc` before `vllm:kv_cache_usage_perc`.
 */
import type { ServerLoad } from '../core/perf/serverLoad';

export interface VllmMetrics {
  running?: number;
  waiting?: number;
  /** 0–1. */
  kvUsage?: number;
  /** One engine's KV capacity in tokens, from vllm:cache_config_info (num_gpu_blocks × block_size) when exported. */
  kvCapacityTokens?: number;
  ttft?: { sum: number; count: number };
  /**
   * Time between a sequence's outputs: one observation per engine output, which is one token without speculative
   * decoding and several with it; the sum over a request is its time from the first token to the last.
   */
  tpot?: { sum: number; count: number };
  /** Prompt tokens looked up in the prefix cache and found there, since the server started (counters). */
  prefixCache?: { queries: number; hits: number };
  /**
   * Data-parallel engines behind the server, when it runs several: each exports its gauges under its own `engine`
   * label (vLLM's PrometheusStatLogger), so the sums above are the whole server's; cache_config_info's block
   * count is the sum over the engines too (the front end adds each engine's as it starts), so kvCapacityTokens
   * divides it by them.
   */
  engines?: number;
}

/** Parses Prometheus text: a metric's value summed over its label sets. */
export function parseVllmMetrics(text: string): VllmMetrics {
  const lines = text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
  const sum = (...names: string[]): number | undefined => {
    for (const name of names) {
      let total: number | undefined;
      for (const line of lines) {
        if (!line.startsWith(name)) continue;
        const rest = line.slice(name.length);
        if (rest[0] !== ' ' && rest[0] !== '{') continue;
        const v = Number(rest.slice(rest.lastIndexOf(' ') + 1));
        if (Number.isFinite(v)) total = (total ?? 0) + v;
      }
      if (total !== undefined) return total;
    }
    return undefined;
  };
  const hist = (...names: string[]) => {
    for (const name of names) {
      const s = sum(`${name}_sum`);
      const c = sum(`${name}_count`);
      if (s !== undefined && c !== undefined) return { sum: s, count: c };
    }
    return undefined;
  };
  const m: VllmMetrics = {};
  const set = <K extends keyof VllmMetrics>(k: K, v: VllmMetrics[K] | undefined) => {
    if (v !== undefined) m[k] = v;
  };
  set('running', sum('vllm:num_requests_running'));
  set('waiting', sum('vllm:num_requests_waiting'));
  set('kvUsage', sum('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'));
  set('ttft', hist('vllm:time_to_first_token_seconds'));
  set('tpot', hist('vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds'));
  const queries = sum('vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total');
  const hits = sum('vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total');
  if (queries !== undefined && hits !== undefined) m.prefixCache = { queries, hits };
  const engines = new Set(lines.filter((l) => l.startsWith('vllm:num_requests_running{')).map((l) => /engine="([^"]*)"/.exec(l)?.[1]));
  if (engines.size > 1) m.engines = engines.size;
  const info = lines.find((l) => l.startsWith('vllm:cache_config_info{'));
  const blocks = info && /num_gpu_blocks="(\d+)"/.exec(info)?.[1];
  const size = info && /block_size="(\d+)"/.exec(info)?.[1];
  // vLLM's front end sums its engines' blocks into the one cache config every engine's line repeats.
  if (blocks && size) m.kvCapacityTokens = Math.round((Number(blocks) * Number(size)) / Math.max(1, engines.size));
  return m;
}

export interface MetricsReadOptions {
  signal?: AbortSignal;
  fetchFn?: (url: string, init?: RequestInit) => Promise<Response>;
  /** Roots known to have no /metrics (404): not asked, and a 404 adds its root. */
  missing?: Set<string>;
}

/** GET {root}/metrics; undefined when the server has none, fails or does not answer. */
export async function readVllmMetrics(root: string, o: MetricsReadOptions = {}): Promise<VllmMetrics | undefined> {
  if (o.missing?.has(root)) return undefined;
  try {
    const res = await (o.fetchFn ?? fetch)(`${root}/metrics`, o.signal ? { signal: o.signal } : {});
    if (res.status === 404) o.missing?.add(root);
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    return parseVllmMetrics(await res.text());
  } catch {
    return undefined;
  }
}

/**
 * Other clients' work on a server, from its metrics: its running sequences and the KV they hold (usage × capacity;
 * the capacity from cache_config_info, else `capacityTokens()`, the profile's). vLLM counts only blocks that running
 * and waiting requests hold as used, not cached blocks nobody holds. Undefined when the server does not say how many
 * requests run. Requests waiting for a seat are counted apart (ServerLoad.waiting); a data-parallel server's load
 * is one engine's, the mean over its engines (ServerLoad.engines).
 */
export function serverLoadOf(m: VllmMetrics | undefined, capacityTokens: () => number): ServerLoad | undefined {
  if (m?.running === undefined) return undefined;
  // The step model sees one engine: a data-parallel server's load is given per engine, its mean.
  const e = m.engines ?? 1;
  // Rounded up: one request on a server of three engines is still someone else's load.
  const sequences = Math.max(0, Math.ceil(m.running / e));
  const waiting = Math.max(0, Math.ceil((m.waiting ?? 0) / e));
  const extra = { ...(waiting > 0 ? { waiting } : {}), ...(e > 1 ? { engines: e } : {}) };
  if (sequences === 0) return { sequences: 0, kvTokens: 0, ...extra };
  const used = ((m.kvUsage ?? 0) / e) * (m.kvCapacityTokens ?? capacityTokens());
  return { sequences, kvTokens: Math.max(0, Math.round(used)), ...extra };
}

/** How long planning waits for a server's /metrics before it plans without the load. */
const LOAD_READ_TIMEOUT_MS = 1000;

/** Each compaction endpoint's load (the agent's first), read at once; undefined where a server did not say. */
export function readServerLoads(
  roots: readonly string[],
  capacityTokens: () => number,
  o: Omit<MetricsReadOptions, 'signal'> = {},
): Promise<(ServerLoad | undefined)[]> {
  const read = (root: string) => readVllmMetrics(root, { ...o, signal: AbortSignal.timeout(LOAD_READ_TIMEOUT_MS) });
  return Promise.all(roots.map(async (root) => serverLoadOf(await read(root), capacityTokens)));
}
