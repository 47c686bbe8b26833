/**
 * The walkthrough's "connect to your server" check: what a new user needs to
 * know before the first task. Plain fetch, no vscode, so the unit test runs
 * it over real HTTP against the simulator. Each probe reports on its own, so
 * one missing route never hides what the others found.
 */
import { normalizeBaseURL, serverRoot } from '../../llm/endpoint';
import { TOOLS_UNSUPPORTED_RE } from '../../llm/errors';
import { parseModelList } from '../../llm/models';
import { readVllmMetrics } from '../../llm/vllmMetrics';

export interface ConnectionReport {
  endpoint: string;
  ok: boolean;
  /** The model the check used: the configured one, else the server's first. */
  model: string | null;
  models: string[];
  window: number | null;
  /** Tokens of a two-message chat by /tokenize; null when the route is missing. */
  tokenizeCount: number | null;
  toolCalls: 'native' | 'text-fallback' | 'unknown';
  prefixCaching: 'on' | 'off' | 'unknown';
  /** One line per finding, for the notification and the log. */
  lines: string[];
  problems: string[];
}

type Fetch = typeof fetch;

export async function checkConnection(
  endpoint: string,
  opts: { model?: string; apiKey?: string; fetch?: Fetch; timeoutMs?: number } = {},
): Promise<ConnectionReport> {
  const f = opts.fetch ?? fetch;
  const base = normalizeBaseURL(endpoint);
  const root = serverRoot(base);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
  };
  const timeout = opts.timeoutMs ?? 10_000;
  const call = async (url: string, init: RequestInit = {}) => f(url, { ...init, headers, signal: AbortSignal.timeout(timeout) });
  const r: ConnectionReport = {
    endpoint: base,
    ok: false,
    model: null,
    models: [],
    window: null,
    tokenizeCount: null,
    toolCalls: 'unknown',
    prefixCaching: 'unknown',
    lines: [],
    problems: [],
  };

  try {
    const res = await call(`${base}/models`);
    if (res.status === 401 || res.status === 403) {
      r.problems.push(`${base}/models answered ${res.status}: the server wants an API key. Run "Splitpoint: Set API Key".`);
      return r;
    }
    if (!res.ok) {
      r.problems.push(`${base}/models answered HTTP ${res.status}; is this the OpenAI-compatible base URL (ending in /v1)?`);
      return r;
    }
    const models = parseModelList(await res.json());
    r.models = models.map((m) => m.id);
    const chosen = (opts.model && models.find((m) => m.id === opts.model)) || models[0];
    if (!chosen) {
      r.problems.push(`${base}/models lists no model.`);
      return r;
    }
    if (opts.model && chosen.id !== opts.model)
      r.problems.push(`The configured model "${opts.model}" is not served here; the server has ${r.models.join(', ')}.`);
    r.model = chosen.id;
    r.window = chosen.maxModelLen ?? null;
    r.lines.push(`Model: ${chosen.id}${models.length > 1 ? ` (of ${models.length})` : ''}`);
    r.lines.push(
      r.window
        ? `Context window: ${r.window.toLocaleString('en-US')} tokens (max_model_len)`
        : 'Context window: not reported; set splitpoint.contextWindow',
    );
  } catch (err) {
    r.problems.push(
      `Cannot reach ${base}: ${(err as Error).message}. Start the server (e.g. vllm serve MODEL --port 8000) or fix splitpoint.endpoint.`,
    );
    return r;
  }
  const messages = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Say OK.' },
  ];

  try {
    const res = await call(`${root}/tokenize`, { method: 'POST', body: JSON.stringify({ model: r.model, messages }) });
    const body = (await res.json().catch(() => ({}))) as { count?: unknown };
    if (res.ok && typeof body.count === 'number') {
      r.tokenizeCount = body.count;
      r.lines.push(`Exact token counts: yes (/tokenize counted ${body.count} tokens for a test chat)`);
    } else
      r.lines.push(
        `Exact token counts: no (/tokenize answered HTTP ${res.status}); Splitpoint estimates locally and calibrates from usage`,
      );
  } catch (err) {
    r.lines.push(`Exact token counts: no (${(err as Error).message})`);
  }

  const tools = [
    { type: 'function', function: { name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} } } },
  ];
  let cachedSecond: number | null = null;
  for (let i = 0; i < 2; i++) {
    try {
      const res = await call(`${base}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: r.model, messages, tools, tool_choice: 'auto', max_tokens: 1, temperature: 0 }),
      });
      const text = await res.text();
      if (res.status === 400 && TOOLS_UNSUPPORTED_RE.test(text)) {
        r.toolCalls = 'text-fallback';
        break;
      }
      if (!res.ok) {
        r.problems.push(`A one-token chat request failed: HTTP ${res.status} ${text.slice(0, 200)}`);
        break;
      }
      r.toolCalls = 'native';
      const usage = (JSON.parse(text) as { usage?: { prompt_tokens_details?: { cached_tokens?: number } | null } }).usage;
      if (i === 1) cachedSecond = usage?.prompt_tokens_details?.cached_tokens ?? null;
    } catch (err) {
      r.problems.push(`A one-token chat request failed: ${(err as Error).message}`);
      break;
    }
  }
  r.lines.push(
    r.toolCalls === 'native'
      ? 'Tool calls: native (the server has a tool-call parser)'
      : r.toolCalls === 'text-fallback'
        ? 'Tool calls: described in the prompt (start vLLM with --enable-auto-tool-choice --tool-call-parser <parser> for native calls)'
        : 'Tool calls: unknown',
  );

  // vLLM reports cached prompt tokens only with --enable-prompt-tokens-details; its /metrics counters are the other witness.
  const counters = (await readVllmMetrics(root, { fetchFn: call }))?.prefixCache;
  const hits = counters?.hits;
  if (cachedSecond !== null && cachedSecond > 0) r.prefixCaching = 'on';
  else if (hits !== undefined && hits > 0) r.prefixCaching = 'on';
  else if (cachedSecond === 0 || hits !== undefined) r.prefixCaching = 'off';
  r.lines.push(
    r.prefixCaching === 'on'
      ? 'Prefix caching: on (a repeated prompt was served from the cache)'
      : r.prefixCaching === 'off'
        ? 'Prefix caching: off or not reported (start vLLM with --enable-prefix-caching; cache-aligned compaction relies on it)'
        : 'Prefix caching: unknown (no cached-token usage and no /metrics)',
  );
  r.ok = r.problems.length === 0;
  return r;
}
