/** /metrics in Prometheus text format, with vLLM's metric names. */
import type { SimStats } from './engine';
import type { CacheStats } from './prefixCache';

export function metricsText(model: string, stats: SimStats, cache: CacheStats): string {
  const label = `{engine="0",model_name="${model}"}`;
  const lines: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}${label} ${Number.isInteger(value) ? `${value}.0` : value}`);
  };
  metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', stats.running);
  metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', stats.queued);
  metric('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', cache.usedBlocks / cache.capacityBlocks);
  metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', cache.queries);
  metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', cache.hits);
  metric('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', stats.promptTokens);
  metric('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', stats.completionTokens);
  return `${lines.join('\n')}\n`;
}
