/**
 * /metrics in Prometheus text format, with the names a current vLLM (2026 and
 * later) exports. Latency histograms are in simulated seconds.
 * vllm:inter_token_latency_seconds is observed once per decoded token after a
 * sequence's first (the step's time), as vLLM v1 does; its old name,
 * vllm:time_per_output_token_seconds, is gone from current servers, so the
 * simulator does not export it either. `v0.10` exports the names of vLLM
 * before the rename (that one, and vllm:gpu_cache_usage_perc); `no-decode`
 * leaves the decode-time histogram out, as a server the client knows no name
 * of would.
 */
export type MetricNames = 'current' | 'v0.10' | 'no-decode';
import type { CacheStats } from './prefixCache';
import type { Histogram, SimStats } from './stats';

export function metricsText(model: string, stats: SimStats, cache: CacheStats, names: MetricNames = 'current'): string {
  const label = `engine="0",model_name="${model}"`;
  const lines: string[] = [];
  const num = (v: number) => (Number.isInteger(v) ? `${v}.0` : String(v));
  const head = (name: string, type: string, help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number) => {
    head(name, type, help);
    lines.push(`${name}{${label}} ${num(value)}`);
  };
  const histogram = (name: string, help: string, h: Histogram) => {
    head(name, 'histogram', help);
    let cumulative = 0;
    h.buckets.forEach((b, i) => {
      cumulative += h.counts[i];
      lines.push(`${name}_bucket{${label},le="${num(b)}"} ${num(cumulative)}`);
    });
    lines.push(
      `${name}_bucket{${label},le="+Inf"} ${num(h.count)}`,
      `${name}_count{${label}} ${num(h.count)}`,
      `${name}_sum{${label}} ${num(h.sum)}`,
    );
  };
  metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', stats.running);
  metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', stats.queued);
  metric(
    names === 'v0.10' ? 'vllm:gpu_cache_usage_perc' : 'vllm:kv_cache_usage_perc',
    'gauge',
    'KV-cache usage. 1 means 100 percent usage.',
    cache.usedBlocks / cache.capacityBlocks,
  );
  metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', cache.queries);
  metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', cache.hits);
  metric('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', stats.promptTokens);
  metric('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', stats.completionTokens);
  histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', stats.ttft);
  if (names === 'current') histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', stats.tpot);
  if (names === 'v0.10') histogram('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', stats.tpot);
  histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', stats.e2e);
  return `${lines.join('\n')}\n`;
}
