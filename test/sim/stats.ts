/**
 * What the simulator records: one record per chat request (times in
 * simulated milliseconds, see clock.ts), live counters, and the latency
 * histograms /metrics exposes with vLLM's names and buckets.
 */

export type RequestKind = 'chat' | 'compaction' | 'judge' | 'script' | 'tool-default';

export interface RequestRecord {
  id: string;
  kind: RequestKind;
  stream: boolean;
  /** Simulated milliseconds since the simulator started (see clock.ts). */
  arrival: number;
  /** Start of the step that admitted it (prefix-cache lookup happened then). */
  admitted?: number;
  /** End of the step that finished its prefill and sampled the first token. */
  firstToken?: number;
  /** End of the step that produced its last token, or when it was cancelled. */
  finished?: number;
  promptTokens: number;
  cachedTokens: number;
  /** Tokens the reply has (the scheduler decodes exactly this many). */
  completionTokens: number;
  /** Mean simulated ms per output token after the first, once done: (finished − firstToken) / (completionTokens − 1). */
  tpotMs?: number;
  /** Tokens decoded so far. */
  generatedTokens?: number;
  /** Scheduler steps the prefill took (chunks). */
  prefillSteps?: number;
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

/** A Prometheus histogram (cumulative buckets are computed when rendered). */
export class Histogram {
  readonly counts: number[];
  count = 0;
  sum = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }
  observe(v: number): void {
    this.count++;
    this.sum += v;
    const i = this.buckets.findIndex((b) => v <= b);
    if (i >= 0) this.counts[i]++;
  }
}

// vLLM v1's buckets (vllm/v1/metrics/loggers.py), in seconds.
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

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
  /** Scheduler steps run, and the simulated milliseconds they took. */
  steps: number;
  busyMs: number;
  /** Simulated seconds from arrival to the first token. */
  ttft: Histogram;
  /** Simulated seconds between consecutive output tokens of a sequence (one observation per decode step). */
  tpot: Histogram;
  /** Simulated seconds from arrival to the last token. */
  e2e: Histogram;
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
    steps: 0,
    busyMs: 0,
    ttft: new Histogram(TTFT_BUCKETS),
    tpot: new Histogram(TPOT_BUCKETS),
    e2e: new Histogram(E2E_BUCKETS),
  };
}
