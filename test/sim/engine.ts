/**
 * The simulator's scheduler and latency model: at most `maxNumSeqs`
 * sequences run at once, the rest wait FIFO (and also while the KV pool is
 * full). Admission is synchronous and in arrival order, so the prefix-cache
 * registration order is exactly the admission order. Prefill costs
 * `prefillMsPerToken` per uncached prompt token, decode `decodeMsPerToken`
 * per generated token; every duration is multiplied by `timeScale`.
 */
import { performance } from 'node:perf_hooks';
import type { Admission, PrefixCache } from './prefixCache';

export interface LatencyModel {
  prefillMsPerToken: number;
  decodeMsPerToken: number;
  /** Fixed cost per request (scheduling, detokenisation). */
  overheadMs: number;
  /** vLLM --max-num-seqs. */
  maxNumSeqs: number;
  /** Multiplies every duration; 0 = no waiting at all. */
  timeScale: number;
}

export const DEFAULT_LATENCY: LatencyModel = {
  prefillMsPerToken: 0.05,
  decodeMsPerToken: 8,
  overheadMs: 2,
  maxNumSeqs: 8,
  timeScale: 1,
};

export type RequestKind = 'chat' | 'compaction' | 'judge' | 'script' | 'tool-default';

export interface RequestRecord {
  id: string;
  kind: RequestKind;
  stream: boolean;
  /** Milliseconds since the simulator started. */
  arrival: number;
  admitted?: number;
  /** When prefill finished (first token). */
  firstToken?: number;
  finished?: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  status: 'queued' | 'running' | 'done' | 'aborted' | 'error';
  /** The client closed the connection before the reply was complete. */
  clientClosed: boolean;
  /** Sequences running right after this one was admitted (itself included). */
  runningAtAdmission?: number;
  /** The TCP connection that carried the request has closed. */
  socketClosed?: boolean;
  /** Number of messages and of tools in the request. */
  messages?: number;
  tools?: number;
  /** HTTP status sent, when not 200. */
  httpStatus?: number;
  fault?: string;
}

export interface SimStats {
  requests: RequestRecord[];
  running: number;
  maxRunning: number;
  queued: number;
  maxQueued: number;
  /** HTTP requests being handled right now (any route). */
  httpInFlight: number;
  maxHttpInFlight: number;
  promptTokens: number;
  completionTokens: number;
  clientCloses: number;
}

export function emptyStats(): SimStats {
  return {
    requests: [],
    running: 0,
    maxRunning: 0,
    queued: 0,
    maxQueued: 0,
    httpInFlight: 0,
    maxHttpInFlight: 0,
    promptTokens: 0,
    completionTokens: 0,
    clientCloses: 0,
  };
}

interface Waiting {
  record: RequestRecord;
  tokens: number[];
  resolve: (a: Admission) => void;
  reject: (e: Error) => void;
}

/** Resolves after ms (scaled by the caller), or early with false when the signal fires. */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Engine {
  private readonly t0 = performance.now();
  private readonly waiting: Waiting[] = [];

  constructor(
    readonly latency: LatencyModel,
    readonly cache: PrefixCache,
    readonly stats: SimStats,
  ) {}

  now(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  scaled(ms: number): number {
    return ms * this.latency.timeScale;
  }

  /** Waits FIFO for a sequence slot and KV blocks, then admits (prefix-cache lookup and registration happen here). */
  admit(record: RequestRecord, tokens: number[], signal: AbortSignal): Promise<Admission> {
    return new Promise((resolve, reject) => {
      const w: Waiting = { record, tokens, resolve, reject };
      this.waiting.push(w);
      this.stats.queued++;
      this.stats.maxQueued = Math.max(this.stats.maxQueued, this.stats.queued);
      signal.addEventListener(
        'abort',
        () => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            this.stats.queued--;
            reject(new Error('client closed while queued'));
          }
        },
        { once: true },
      );
      this.schedule();
    });
  }

  private schedule(): void {
    while (this.waiting.length > 0 && this.stats.running < this.latency.maxNumSeqs) {
      const w = this.waiting[0];
      if (this.stats.running > 0 && !this.cache.canAdmit(w.tokens)) break;
      this.waiting.shift();
      this.stats.queued--;
      this.stats.running++;
      this.stats.maxRunning = Math.max(this.stats.maxRunning, this.stats.running);
      const a = this.cache.admit(w.record.id, w.tokens);
      w.record.admitted = this.now();
      w.record.status = 'running';
      w.record.cachedTokens = a.cachedTokens;
      w.record.runningAtAdmission = this.stats.running;
      w.resolve(a);
    }
  }

  /** Sleeps for the prefill of the uncached tokens; then (pessimistic mode) registers the blocks. */
  async prefill(record: RequestRecord, a: Admission, signal: AbortSignal): Promise<boolean> {
    const ms = this.scaled(this.latency.overheadMs + (a.promptTokens - a.cachedTokens) * this.latency.prefillMsPerToken);
    const ok = await pause(ms, signal);
    if (ok) {
      this.cache.prefillDone(record.id);
      record.firstToken = this.now();
    }
    return ok;
  }

  decodeMs(tokens: number): number {
    return this.scaled(tokens * this.latency.decodeMsPerToken);
  }

  /** The sequence ended (done or aborted): free its blocks and admit waiters. */
  finish(record: RequestRecord, status: RequestRecord['status']): void {
    if (record.status !== 'running') {
      record.status = status;
      record.finished ??= this.now();
      return;
    }
    record.status = status;
    record.finished = this.now();
    this.stats.running--;
    this.cache.release(record.id);
    this.schedule();
  }
}
