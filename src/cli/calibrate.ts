/**
 * `splitpoint bench --calibrate`: times a few requests of chosen sizes against
 * a server and fits a performance profile (src/core/perf/learn.ts). Times come
 * from vLLM's own /metrics histograms when the server exports them (no network
 * time in them), else from the client's clock less a tiny request's round trip.
 */
import type { PrefillObservation, DecodeObservation } from '../core/perf/learn';
import { learnProfile } from '../core/perf/learn';
import type { PerfProfile } from '../core/perf/profile';
import { BadRequestError } from '../llm';
import type { VllmClient } from '../llm';
import { readVllmMetrics } from '../llm/vllmMetrics';
import type { VllmMetrics } from '../llm/vllmMetrics';

export interface CalibrateOptions {
  client: VllmClient;
  contextWindow: number;
  base: PerfProfile;
  name: string;
  /** Prompt sizes to time (the server's tokens); those over the window less the decode requests' output are skipped. */
  sizes?: readonly number[];
  log?: (line: string) => void;
}

export interface Calibration {
  profile: PerfProfile;
  prefill: PrefillObservation[];
  decode: DecodeObservation[];
  /** Where the times came from: prefill times (TTFT) and decode times (TPOT) each from the server or the client. */
  timing: Timing;
  plan: CalibrationPlan;
  /** What makes a coefficient doubtful (short replies, a noisy fit); empty when nothing did. */
  warnings: string[];
}

/** What was sent: the prompt sizes as the server counted them, and the decode requests' KV and output. */
export interface CalibrationPlan {
  contextWindow: number;
  /** No prompt was made larger than this: the window less one decode's output, less a margin for the size estimate. */
  promptCapTokens: number;
  prefillTokens: number[];
  decodeKvTokens: number[];
  /** Output tokens asked of each decode request. */
  decodeOutputTokens: number;
  /** The server's tokens per word of calibration text, from the first prompt's usage. */
  tokensPerWord: number;
}

export type Timing = 'server metrics' | 'client clock' | 'server metrics for prefill, client clock for decode';

/** Prompt sizes aimed at below the largest; a window too small for one gets the largest that fits instead. */
const PREFILL_STEPS = [512, 2048, 8192, 16_384];
const LARGEST_PROMPT = 32_768;
/**
 * The server's histograms time a short reply exactly. The client's clock is off by a millisecond or two at each
 * end, and the KV's share of a step is a few per cent: over ~1,000 tokens that error is small against it.
 */
const DECODE_TOKENS_SERVER = 128;
const DECODE_TOKENS_CLIENT = 1024;
/** Share of the room left by the decode output that prompts may fill: the words-to-tokens estimate is not exact. */
const FILL = 0.9;
/** The first prompt is sized before the server's tokens per word are known: cl100k's count for freshText. */
const GUESS_TOKENS_PER_WORD = 2;

const WORDS = ['alpha', 'delta', 'kernel', 'vector', 'lambda', 'socket', 'matrix', 'buffer', 'cursor', 'render', 'signal', 'packet'];

/** `words` words of text no earlier request shares (a fresh seed per call), so nothing comes from the prefix cache. */
function freshText(words: number, seed: number): string {
  let x = seed * 2654435761 + 1;
  const out: string[] = [`calibration ${seed} ${Date.now()}`];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(`${WORDS[x % WORDS.length]}${x % 1000}`);
  }
  return out.join(' ');
}

/**
 * The prompt sizes (tokens) for a window, when each decode request asks for `decodeTokens` of output: the largest
 * leaves room for that output (decode reuses the prompts); a step close under the largest adds little spread to the
 * fit beside it and is left out. Sorted ascending.
 */
export function promptSizes(contextWindow: number, decodeTokens: number, asked?: readonly number[]): { cap: number; sizes: number[] } {
  const cap = Math.floor(FILL * (contextWindow - decodeTokens));
  if (asked) return { cap, sizes: [...new Set(asked)].filter((n) => n > 0 && n <= cap).sort((a, b) => a - b) };
  const top = Math.min(LARGEST_PROMPT, cap);
  return { cap, sizes: [...PREFILL_STEPS.filter((n) => n * 1.5 <= top), top] };
}

/** Output tokens per decode request: fewer on a small window, which must hold them beside the prompts. */
export function decodeOutputTokens(contextWindow: number, serverTimesDecode: boolean): number {
  return serverTimesDecode ? DECODE_TOKENS_SERVER : Math.min(DECODE_TOKENS_CLIENT, Math.floor(contextWindow / 8));
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

async function timedRequest(client: VllmClient, content: string, maxTokens: number, runToLength: boolean): Promise<TimedBy> {
  const before = await readVllmMetrics(client.root);
  // vLLM's sampling extensions: without them a model may stop at its end-of-sequence token after a few tokens.
  const extraBody = runToLength ? { ignore_eos: true, min_tokens: maxTokens } : undefined;
  // The transport reads streams every 100 ms unless asked for less; the client clock must see each token as it comes.
  const req = { messages: [{ role: 'user' as const, content }], maxTokens, temperature: 0, stream: true, deltaBatchMs: 1, extraBody };
  const sent = performance.now();
  let first: number | undefined;
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

/** Sends the calibration's requests; drops vLLM's sampling extensions once a server refuses them, and says so. */
class Requester {
  private extensions = true;

  constructor(
    private readonly client: VllmClient,
    private readonly warnings: string[],
  ) {}

  async timed(content: string, maxTokens: number): Promise<TimedBy> {
    const ask = this.extensions && maxTokens > 1;
    try {
      return await timedRequest(this.client, content, maxTokens, ask);
    } catch (e) {
      if (!ask || !(e instanceof BadRequestError) || !/ignore_eos|min_tokens/.test(e.message)) throw e;
      this.extensions = false;
      this.warnings.push(`the server refused ignore_eos/min_tokens (${e.message}): replies may end before the output asked for`);
      return timedRequest(this.client, content, maxTokens, false);
    }
  }

  /** The server's own count of a prompt, when it has /tokenize (a local count would not be the server's). */
  async count(content: string): Promise<number | undefined> {
    if (this.client.tokenizeFallsBack) return undefined;
    try {
      const c = await this.client.tokenize([{ role: 'user', content }]);
      return c.source === 'server' ? c.count : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A prompt's tokens as a line in its words: the chat template and the text's header are the fixed part. */
interface TextSize {
  fixed: number;
  perWord: number;
}

const TINY_WORDS = 8;

/** The decode prompts: the prefill prompts nearest a third, two thirds and all of the largest (cached by then). */
function decodePrompts(runs: readonly { text: string; tokens: number }[]): { text: string; tokens: number }[] {
  const top = runs.at(-1)!.tokens;
  const picked = [top / 3, (2 * top) / 3, top].map((aim) =>
    runs.reduce((best, r) => (Math.abs(r.tokens - aim) < Math.abs(best.tokens - aim) ? r : best)),
  );
  return [...new Set(picked)];
}

/**
 * When the fit leaves more scatter than the KV's share of a step across the sizes timed, the per-KV slope is mostly
 * that scatter (a busy server, a clock's error). Undefined when the residual is small against both.
 */
export function decodeResidualWarning(step: PerfProfile['step'], decode: readonly DecodeObservation[]): string | undefined {
  if (decode.length < 3) return undefined;
  const predicted = decode.map((d) => step.minStepMs + (step.decodeKvMsPerKToken * d.kvTokens) / 1000);
  const rms = Math.sqrt(decode.reduce((s, d, i) => s + (d.tpotMs - predicted[i]!) ** 2, 0) / decode.length);
  const kv = decode.map((d) => d.kvTokens);
  const span = (step.decodeKvMsPerKToken * (Math.max(...kv) - Math.min(...kv))) / 1000;
  const meanTpot = decode.reduce((s, d) => s + d.tpotMs, 0) / decode.length;
  if (rms <= 0.2 * span || rms <= 0.005 * meanTpot) return undefined;
  return (
    `the decode fit's residual (${rms.toFixed(3)} ms per token) is large against the KV's effect across the sizes timed ` +
    `(${span.toFixed(3)} ms): decodeKvMsPerKToken ${step.decodeKvMsPerKToken.toFixed(4)} is uncertain; calibrate again on an idle server`
  );
}

export async function calibrate(o: CalibrateOptions): Promise<Calibration> {
  const log = o.log ?? (() => undefined);
  const warnings: string[] = [];
  const req = new Requester(o.client, warnings);
  let seed = 1;
  // The first request also opens the connection and looks the model up: it is not timed for the round trip.
  const probe = await req.timed(freshText(TINY_WORDS, seed++), 2);
  let server = probe.server;
  // The round trip of a request with almost no work, taken off client-clock times: the least of a few.
  let tinyMs = Infinity;
  if (!server) for (let i = 0; i < 3; i++) tinyMs = Math.min(tinyMs, (await req.timed(freshText(TINY_WORDS, seed++), 2)).t.ttftMs);
  const decodeTokens = decodeOutputTokens(o.contextWindow, probe.serverDecode);
  const { cap, sizes } = promptSizes(o.contextWindow, decodeTokens, o.sizes);
  if (sizes.length < 3)
    throw new Error(
      `the window (${o.contextWindow} tokens) is too small to calibrate: need three prompt sizes from ${PREFILL_STEPS[0]} tokens ` +
        `up to ${cap} (the window less ${decodeTokens} output tokens, less ${Math.round(100 * (1 - FILL))} %)`,
    );
  log(`prompt sizes aimed at: ${sizes.join(', ')} tokens (window ${o.contextWindow}; none over ${cap})`);

  let size: TextSize = { fixed: probe.t.promptTokens - GUESS_TOKENS_PER_WORD * TINY_WORDS, perWord: GUESS_TOKENS_PER_WORD };
  let measured = false;
  const runs: { text: string; tokens: number; t: Timed; server: boolean }[] = [];
  for (const n of sizes) {
    const words = Math.max(1, Math.round((n - size.fixed) / size.perWord));
    let text = freshText(words, seed++);
    // A server with /tokenize counts the prompt exactly before it is sent: one over the cap is cut to fit.
    const exact = await req.count(text);
    if (exact !== undefined && exact > cap) text = freshText(Math.floor((words * (cap - size.fixed)) / (exact - size.fixed)), seed++);
    const { t, server: s } = await req.timed(text, 1);
    server &&= s;
    runs.push({ text, tokens: t.promptTokens, t, server: s });
    log(`prefill ${t.promptTokens - t.cachedTokens} tokens: ${t.ttftMs.toFixed(1)} ms to first token`);
    if (!measured) {
      // The server's tokens per word, from this prompt's count against the tiny one's: its tokenizer, its template.
      const perWord = (t.promptTokens - probe.t.promptTokens) / (words - TINY_WORDS);
      if (words > TINY_WORDS && perWord > 0) size = { fixed: probe.t.promptTokens - perWord * TINY_WORDS, perWord };
      measured = true;
      log(`calibration text: ${size.perWord.toFixed(2)} tokens per word on this server`);
    }
  }

  // Decode alone at a short KV and at up to three longer ones (those prompts are cached by now, so their prefill is short).
  const decode: DecodeObservation[] = [];
  // A server can export TTFT but not the inter-token histogram (under a name this client does not know): its
  // decode times are then the client's, and the label says so.
  let serverDecode = server;
  const short: number[] = [];
  const decodeAt = [freshText(32, seed), ...decodePrompts(runs).map((r) => r.text)];
  for (const text of decodeAt) {
    const { t, server: s, serverDecode: sd } = await req.timed(text, decodeTokens);
    server &&= s;
    serverDecode &&= sd;
    if (!sd && t.completionTokens < decodeTokens) short.push(t.completionTokens);
    if (t.tpotMs !== undefined && t.completionTokens > 8) {
      decode.push({ kvTokens: t.promptTokens + t.completionTokens / 2, tpotMs: t.tpotMs });
      log(`decode at ${t.promptTokens} KV tokens: ${t.tpotMs.toFixed(2)} ms per output token over ${t.completionTokens} tokens`);
    }
  }
  const when = new Date().toISOString();
  const metrics = await readVllmMetrics(o.client.root);
  const base = metrics?.kvCapacityTokens ? { ...o.base, kvCapacityTokens: metrics.kvCapacityTokens } : o.base;
  const timing: Timing = !server ? 'client clock' : serverDecode ? 'server metrics' : 'server metrics for prefill, client clock for decode';
  const decodeFit = learnProfile(base, { prefill: [], decode }, o.name, '');
  const fitted = new Set(decode.map((d) => Math.round(d.kvTokens / 1000))).size >= 2;
  let decodeNote = '';
  if (!fitted) {
    decodeNote = '; decode kept from the base';
    warnings.push(
      `too few decode replies to fit (${decode.length} of ${decodeAt.length} long enough): minStepMs and decodeKvMsPerKToken ` +
        `are ${o.base.name}'s, not this server's`,
    );
  } else if (short.length > 0) {
    decodeNote = '; decode fit unreliable';
    warnings.push(
      `${short.length} of ${decodeAt.length} decode replies stopped early (${Math.min(...short)} of ${decodeTokens} tokens asked; ` +
        `does the server honour ignore_eos and min_tokens?): the decode fit is unreliable`,
    );
  } else {
    const residual = decodeResidualWarning(decodeFit.step, decode);
    if (residual) warnings.push(residual);
  }

  // The tiny request's time is a round trip plus one step of its own (a prefill that small costs a decode step):
  // what the client clock adds to a prefill is the round trip alone.
  const roundTripMs = Number.isFinite(tinyMs) ? Math.max(0, tinyMs - decodeFit.step.minStepMs) : 0;
  const prefill: PrefillObservation[] = runs.map(({ t, server: s }) => ({
    newTokens: t.promptTokens - t.cachedTokens,
    cachedTokens: t.cachedTokens,
    ttftMs: Math.max(0.01, t.ttftMs - (s ? 0 : roundTripMs)),
  }));
  const profile = learnProfile(
    base,
    { prefill, decode },
    o.name,
    `calibrated ${when} against ${o.client.baseURL} (${timing}${decodeNote}); limits from ${o.base.name}`,
  );
  const plan: CalibrationPlan = {
    contextWindow: o.contextWindow,
    promptCapTokens: cap,
    prefillTokens: runs.map((r) => r.tokens),
    decodeKvTokens: decode.map((d) => Math.round(d.kvTokens)),
    decodeOutputTokens: decodeTokens,
    tokensPerWord: size.perWord,
  };
  return { profile, prefill, decode, timing, plan, warnings };
}
