/**
 * `splitpoint bench --calibrate`: times a few requests of chosen sizes against
 * a server and fits a performance profile (src/core/perf/learn.ts). Times come
 * from vLLM's own /metrics histograms when the server exports them (no network
 * time in them), else from the client's clock less a tiny request's round trip.
 */
import type { PrefillObservation, DecodeObservation } from '../core/perf/learn';
import { learnProfile } from '../core/perf/learn';
import type { PerfProfile } from '../core/perf/profile';
import type { VllmClient } from '../llm';
import { readVllmMetrics } from '../llm/vllmMetrics';
import type { VllmMetrics } from '../llm/vllmMetrics';

export interface CalibrateOptions {
  client: VllmClient;
  contextWindow: number;
  base: PerfProfile;
  name: string;
  /** Prefill sizes to time (tokens); those over half the window are skipped. */
  sizes?: readonly number[];
  log?: (line: string) => void;
}

export interface Calibration {
  profile: PerfProfile;
  prefill: PrefillObservation[];
  decode: DecodeObservation[];
  /** Where the times came from: prefill times (TTFT) and decode times (TPOT) each from the server or the client. */
  timing: Timing;
}

export type Timing = 'server metrics' | 'client clock' | 'server metrics for prefill, client clock for decode';

const WORDS = ['alpha', 'delta', 'kernel', 'vector', 'lambda', 'socket', 'matrix', 'buffer', 'cursor', 'render', 'signal', 'packet'];

/** About n tokens of text no earlier request shares (a fresh seed per call), so nothing comes from the prefix cache. */
function freshText(n: number, seed: number): string {
  let x = seed * 2654435761 + 1;
  const out: string[] = [`calibration ${seed} ${Date.now()}`];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(`${WORDS[x % WORDS.length]}${x % 1000}`);
  }
  return out.join(' ');
}

interface Timed {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  ttftMs: number;
  tpotMs: number | undefined;
}

/** A timed request, and whether the server's own histograms timed its first token and its decoded tokens. */
interface TimedBy {
  t: Timed;
  server: boolean;
  serverDecode: boolean;
}

async function timedRequest(client: VllmClient, content: string, maxTokens: number): Promise<TimedBy> {
  const before = await readVllmMetrics(client.root);
  const sent = performance.now();
  let first: number | undefined;
  const req = { messages: [{ role: 'user' as const, content }], maxTokens, temperature: 0, stream: true };
  const r = await client.chat(req, { onDelta: () => (first ??= performance.now()) });
  const end = performance.now();
  const after = await readVllmMetrics(client.root);
  const u = r.usage;
  if (!u) throw new Error('the server reported no token usage; calibration needs usage in the reply (stream_options.include_usage)');
  const server = serverTimes(before, after, u.completionTokens);
  const ttftMs = server?.ttftMs ?? (first ?? end) - sent;
  const tpotMs = server?.tpotMs ?? (first !== undefined && u.completionTokens > 1 ? (end - first) / (u.completionTokens - 1) : undefined);
  const t: Timed = {
    promptTokens: u.promptTokens,
    cachedTokens: u.cachedTokens ?? 0,
    completionTokens: u.completionTokens,
    ttftMs,
    tpotMs,
  };
  return { t, server: server !== undefined, serverDecode: server?.tpotMs !== undefined };
}

/**
 * The server's own TTFT and TPOT for the one request between two reads, when its histograms moved by exactly that
 * request. The inter-token histogram has one observation per engine output, not per token: with speculative decoding
 * one output carries several tokens. Its sum is the time from the first token to the last either way, so the time
 * per token is that sum over the tokens after the first.
 */
export function serverTimes(
  a: VllmMetrics | undefined,
  b: VllmMetrics | undefined,
  tokens: number,
): { ttftMs: number; tpotMs: number | undefined } | undefined {
  if (!a?.ttft || !b?.ttft || b.ttft.count - a.ttft.count !== 1) return undefined;
  const ttftMs = 1000 * (b.ttft.sum - a.ttft.sum);
  const n = a.tpot && b.tpot ? b.tpot.count - a.tpot.count : 0;
  // Another client's request running at either read put its own outputs into the sum: decode goes by the clock then.
  const alone = (a.running ?? 0) === 0 && (b.running ?? 0) === 0;
  const tpotMs = alone && n > 0 && n < tokens ? (1000 * (b.tpot!.sum - a.tpot!.sum)) / (tokens - 1) : undefined;
  return { ttftMs, tpotMs };
}

export async function calibrate(o: CalibrateOptions): Promise<Calibration> {
  const log = o.log ?? (() => undefined);
  const sizes = (o.sizes ?? [512, 2048, 8192, 16384, 32768]).filter((n) => n <= o.contextWindow / 2);
  if (sizes.length < 3)
    throw new Error(`the window (${o.contextWindow} tokens) is too small to calibrate: need three prefill sizes up to half of it`);
  let seed = 1;
  // The round trip of a request with almost no work: taken off client-clock times.
  const tiny = await timedRequest(o.client, freshText(8, seed++), 1);
  const overhead = tiny.server ? 0 : tiny.t.ttftMs;
  const prefill: PrefillObservation[] = [];
  let server = tiny.server;
  let longest = '';
  for (const n of sizes) {
    const text = freshText(n, seed++);
    const { t, server: s } = await timedRequest(o.client, text, 1);
    server &&= s;
    prefill.push({
      newTokens: t.promptTokens - t.cachedTokens,
      cachedTokens: t.cachedTokens,
      ttftMs: Math.max(0.01, t.ttftMs - (s ? 0 : overhead)),
    });
    log(`prefill ${t.promptTokens - t.cachedTokens} tokens: ${t.ttftMs.toFixed(1)} ms to first token`);
    longest = text;
  }
  // Decode alone at a short and a long KV (the long prompt is cached by now, so its prefill is short).
  const decode: DecodeObservation[] = [];
  // A server can export TTFT but not the inter-token histogram (under a name this client does not know): its
  // decode times are then the client's, and the label says so.
  let serverDecode = server;
  for (const text of [freshText(32, seed), longest]) {
    const { t, server: s, serverDecode: sd } = await timedRequest(o.client, text, 128);
    server &&= s;
    serverDecode &&= sd;
    if (t.tpotMs !== undefined && t.completionTokens > 8) {
      decode.push({ kvTokens: t.promptTokens + t.completionTokens / 2, tpotMs: t.tpotMs });
      log(`decode at ${t.promptTokens} KV tokens: ${t.tpotMs.toFixed(2)} ms per output token`);
    }
  }
  const when = new Date().toISOString();
  const metrics = await readVllmMetrics(o.client.root);
  const base = metrics?.kvCapacityTokens ? { ...o.base, kvCapacityTokens: metrics.kvCapacityTokens } : o.base;
  const timing: Timing = !server ? 'client clock' : serverDecode ? 'server metrics' : 'server metrics for prefill, client clock for decode';
  const profile = learnProfile(
    base,
    { prefill, decode },
    o.name,
    `calibrated ${when} against ${o.client.baseURL} (${timing}); limits from ${o.base.name}`,
  );
  return { profile, prefill, decode, timing };
}
