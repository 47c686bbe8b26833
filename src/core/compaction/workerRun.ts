import type { ChatMessage } from '../messages';
import type { LimiterPort, ModelDelta, ModelPort } from '../ports';
import { elapsedNow, type Clock } from '../session/storage';
import type { BlockStats } from './events';
import type { Gate } from './gate';
import { stripThinking } from './merge';
import type { Block } from './partition';
import type { CompactionPlan } from './plan';
import { buildWorkerPrompt } from './workerPrompt';

/** A server compaction workers can use: its client and its limiter. */
export interface WorkerEndpoint {
  model: ModelPort;
  limiter: LimiterPort;
}

export interface WorkerRun {
  plan: CompactionPlan;
  block: Block;
  focus: string | undefined;
  count: (m: ChatMessage) => number;
  clock: Clock;
  gate: Gate;
  /** Picks (and counts as loaded) the endpoint once the worker may go: cache-aligned, the agent's; else the least loaded. */
  pickEndpoint: () => number;
  endpoints: readonly WorkerEndpoint[];
  attempts: number;
  signal: AbortSignal;
  /** The request is about to be sent to endpoint i. */
  onSent: (endpoint: number) => void;
  /** The worker is done with endpoint i (sent says whether the request went out). */
  onEnded: (endpoint: number, sent: boolean) => void;
  /** The first output token arrived (the prompt is computed). */
  onFirstToken: () => void;
  /** Output tokens so far, every ~16. */
  onProgress: (tokens: number) => void;
  /** How often a streamed reply is read, asked before each read (workerPace.ts). */
  paceMs: () => number;
}

/** Sends one block's worker and returns its summary and stats; throws on failure. */
export async function runWorker(w: WorkerRun): Promise<{ text: string; stats: BlockStats }> {
  const queuedAt = elapsedNow(w.clock);
  const leave = await w.gate.enter(w.signal);
  let release: (() => void) | undefined;
  let endpoint = -1;
  let sent = false;
  try {
    endpoint = w.pickEndpoint();
    const ep = w.endpoints[endpoint]!;
    release = await ep.limiter.acquire(w.signal);
    const sentAt = elapsedNow(w.clock);
    sent = true;
    w.onSent(endpoint);
    const prompt = buildWorkerPrompt(w.plan, w.block, w.focus, w.count);
    if (prompt.request.stream) prompt.request.deltaBatchMs = w.paceMs;
    const progress = new StreamProgress(w);
    const result = await ep.model.chat(prompt.request, { signal: w.signal, onDelta: progress.delta.bind(progress) });
    const raw = (result.message.content ?? '').trim();
    const text = stripThinking(raw).trim();
    // Thinking is decoded (and counted in completion_tokens) but is not part of the summary.
    const thought = (result.reasoning?.length ?? 0) > 0 || text !== raw;
    if (text.length === 0 && !w.signal.aborted)
      throw new Error(`the model returned an empty summary (finish reason: ${result.finishReason ?? 'none'})`);
    const stats: BlockStats = {
      inputTokens: result.usage?.promptTokens ?? prompt.promptTokens,
      outputTokens: result.usage?.completionTokens ?? w.count({ role: 'user', content: text }),
      ...(thought && result.usage ? { summaryTokens: w.count({ role: 'user', content: text }) } : {}),
      cachedTokens: result.usage?.cachedTokens,
      endpoint,
      usageReported: result.usage !== undefined,
      ms: elapsedNow(w.clock) - sentAt,
      queuedMs: sentAt - queuedAt,
      instructionTokens: prompt.instructionTokens,
      attempts: w.attempts,
      trimmed: prompt.trimmed,
    };
    return { text, stats };
  } finally {
    w.onFirstToken();
    if (endpoint >= 0) w.onEnded(endpoint, sent);
    release?.();
    leave();
  }
}

/**
 * A worker's streamed reply as progress: only a length is kept, since the reply's text comes back whole with the
 * result. A class, not a closure made per worker: this runs for every token, and V8 drops a per-call closure's
 * optimised code at each major collection, so each compaction compiled it again.
 */
class StreamProgress {
  private chars = 0;
  private reported = 0;
  private started = false;

  constructor(private readonly w: Pick<WorkerRun, 'onFirstToken' | 'onProgress'>) {}

  delta(d: ModelDelta): void {
    if (!this.started) {
      this.started = true;
      this.w.onFirstToken();
    }
    if (d.type === 'reset') this.chars = this.reported = 0;
    // A reasoning model thinks before it writes: that is writing too, and the block should not look unstarted.
    if (d.type !== 'content' && d.type !== 'reasoning') return;
    this.chars += d.text.length;
    // Report progress every ~16 output tokens, not on every chunk.
    const n = Math.ceil(this.chars / 4);
    if (n - this.reported >= 16) {
      this.reported = n;
      this.w.onProgress(n);
    }
  }
}
