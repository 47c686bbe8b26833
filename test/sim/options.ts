/** The simulator's options and handle, and how a performance profile is chosen. */
import { NAMED_PROFILES, namedProfile, perfProfileSchema, type PerfProfile } from '../../src/core/perf/profile';
import { readProfileFile } from '../../src/node/profileFile';
import type { SimFault } from './faults';
import type { PrefixCache } from './prefixCache';
import type { JudgeVerdict } from './replies';
import type { ScriptReply, SimScript } from './script';
import type { SimStats } from './stats';
import type { WireMessage, WireTool } from './template';
import type { SimTokenizer } from './tokenizer';
import type { ErrorShape, OverflowWording } from './vllmErrors';
import type { MetricNames } from './metrics';

export interface SimOptions {
  /** 0 (default) = any free port. */
  port?: number;
  host?: string;
  model?: string;
  /** The context window reported as max_model_len and enforced (default 32768). */
  maxModelLen?: number;
  tokenizer?: 'tiktoken' | 'char' | SimTokenizer;
  blockSize?: number;
  /** The step costs and limits: a PerfProfile or a named one ('h100-7b', the default; 'unit'). */
  profile?: PerfProfile | string;
  /** Real milliseconds per simulated millisecond (default 1; 0 = never sleep, see clock.ts). */
  timeScale?: number;
  /** Override the profile's vLLM --max-num-seqs. */
  maxNumSeqs?: number;
  /** Override the profile's vLLM --max-num-batched-tokens. */
  maxNumBatchedTokens?: number;
  /** KV pool size in blocks (default: the profile's kvCapacityTokens / blockSize). */
  cacheCapacityBlocks?: number;
  /** Register blocks only after prefill completes, instead of at admission (vLLM v1). */
  pessimistic?: boolean;
  /** false = no prefix caching (default true). */
  prefixCaching?: boolean;
  /** false = behave as vLLM without --enable-auto-tool-choice/--tool-call-parser (default true). */
  toolParser?: boolean;
  /**
   * Answer 400 when an assistant tool call in the history has arguments that are not JSON, as vLLM's 2025 releases
   * did (later ones put {} in their place). Default false.
   */
  strictHistoryArguments?: boolean;
  /** false = no /tokenize route (404). */
  tokenizeRoute?: boolean;
  /**
   * Report usage.prompt_tokens_details (vLLM --enable-prompt-tokens-details). Default true. 'nonzero': only when
   * some prompt tokens came from the cache, as vLLM's 2025 releases did (`if … and num_cached_tokens:`).
   */
  promptTokensDetails?: boolean | 'nonzero';
  errorShape?: ErrorShape;
  /** Which names /metrics uses (test/sim/metrics.ts): a current vLLM's (default), v0.10's, or none for decode times. */
  metricNames?: MetricNames;
  overflowWording?: OverflowWording;
  /** The summarizer's length prior in tokens (default 500). */
  summaryTokens?: number;
  script?: SimScript | ScriptReply[] | string;
  /** Field name for reasoning in replies (default 'reasoning'; older vLLM: 'reasoning_content'). */
  reasoningField?: 'reasoning' | 'reasoning_content';
  /** Require this Bearer token (vLLM --api-key). */
  apiKey?: string;
  /** Tokens per streamed content chunk (default 4). */
  streamChunkTokens?: number;
  log?: (line: string) => void;
}

export interface SimClock {
  /** Simulated milliseconds since start. */
  nowMs: number;
  timeScale: number;
  profile: string;
  running: number;
  waiting: number;
  steps: number;
  /** Simulated milliseconds spent in steps. */
  busyMs: number;
}

export interface SimHandle {
  /** OpenAI base URL, http://127.0.0.1:PORT/v1 */
  url: string;
  /** Server root, http://127.0.0.1:PORT */
  origin: string;
  port: number;
  model: string;
  maxModelLen: number;
  /** The profile the scheduler runs on, limits overrides applied. */
  readonly profile: PerfProfile;
  readonly timeScale: number;
  /** Live statistics and the per-request log (times in simulated ms). */
  readonly stats: SimStats;
  readonly cache: PrefixCache;
  readonly tokenizer: SimTokenizer;
  /** Simulated now and scheduler counters (also GET /sim/clock). */
  clock(): SimClock;
  /** Stops the scheduler after its current step and freezes the clock; requests queue. */
  pauseScheduler(): void;
  resumeScheduler(): void;
  injectFault(fault: SimFault): void;
  clearFaults(): void;
  setScript(script: SimScript | ScriptReply[] | string | undefined): void;
  /** Scripted judge verdicts, consumed in order by judge requests before the deterministic judge takes over. */
  queueJudgeVerdicts(verdicts: JudgeVerdict[]): void;
  /** Replaces the prefix cache (e.g. to switch pessimistic on/off); only between requests. */
  resetCache(opts?: { pessimistic?: boolean; capacityBlocks?: number; enabled?: boolean }): void;
  resetStats(): void;
  /** The prompt tokens the simulator would see for this chat. */
  tokenize(messages: WireMessage[], tools?: WireTool[], addGenerationPrompt?: boolean): number[];
  metricsText(): string;
  /** The JSON body of the last /v1/chat/completions request. */
  lastChatBody(): Record<string, unknown> | undefined;
  /**
   * Connections carrying a request right now. Idle keep-alive connections
   * (which HTTP clients keep pooled, and are not leaks) are not counted.
   */
  openSockets(): number;
  /** Every TCP connection currently open, busy or idle. */
  connectedSockets(): number;
  close(): Promise<void>;
}

/** Reads and validates a PerfProfile JSON file (shared with the CLI and the extension). */
export const loadProfileFile = readProfileFile;

/** The profile named or given, with the limits overrides applied. */
export function resolveProfile(opts: Pick<SimOptions, 'profile' | 'maxNumSeqs' | 'maxNumBatchedTokens'>): PerfProfile {
  let base: PerfProfile;
  if (opts.profile === undefined || typeof opts.profile === 'string') {
    const name = opts.profile ?? 'h100-7b';
    const p = namedProfile(name);
    if (!p)
      throw new Error(`unknown profile "${name}" (known: ${Object.keys(NAMED_PROFILES).join(', ')}; or give a PerfProfile JSON file)`);
    base = p;
  } else {
    base = perfProfileSchema.parse(opts.profile);
  }
  for (const [k, v] of [
    ['maxNumSeqs', opts.maxNumSeqs],
    ['maxNumBatchedTokens', opts.maxNumBatchedTokens],
  ] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new Error(`${k} must be a positive integer, got ${v}`);
  }
  return {
    ...base,
    maxNumSeqs: opts.maxNumSeqs ?? base.maxNumSeqs,
    maxNumBatchedTokens: opts.maxNumBatchedTokens ?? base.maxNumBatchedTokens,
  };
}
