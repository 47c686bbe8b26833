import type { ChatMessage } from '../messages';
import type { LimiterPort, ModelDelta, ModelPort } from '../ports';
import { elapsedNow, type Clock } from '../session/storage';
import type { BlockStats } from './events';
import type { Gate } from './gate';
import { stripThinking } from './merge';
import type { Block } from './partition';
import type { CompactionPlan } from './plan';
import { summarySections } from './prompts';
import { buildWorkerPrompt, countingMargin, instructionInput } from './workerPrompt';

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
  /** A retry of a reply cut off at max_tokens: the max_tokens to ask for instead of the plan's, if the window has room. */
  maxTokens?: number | undefined;
  signal: AbortSignal;
  /** The request is about to be sent to endpoint i. */
  onSent: (endpoint: number) => void;
  /** The worker is done with endpoint i (sent: the request went out; failed: the endpoint failed it). */
  onEnded: (endpoint: number, sent: boolean, failed: boolean) => void;
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
  let failed = false;
  try {
    endpoint = w.pickEndpoint();
    const ep = w.endpoints[endpoint]!;
    release = await ep.limiter.acquire(w.signal);
    const sentAt = elapsedNow(w.clock);
    sent = true;
    w.onSent(endpoint);
    const prompt = buildWorkerPrompt(w.plan, w.block, w.focus, w.count);
    if (w.maxTokens !== undefined)
      prompt.request.maxTokens = retryMaxTokens(w.plan, prompt.promptTokens, prompt.request.maxTokens, w.maxTokens);
    if (prompt.request.stream) prompt.request.deltaBatchMs = w.paceMs;
    const progress = new StreamProgress(w);
    const result = await ep.model
      .chat(prompt.request, { signal: w.signal, onDelta: progress.delta.bind(progress) })
      .catch((err: unknown) => {
        // The endpoint failed it (down, overloaded, refusing): the picker passes over it for a while.
        failed = !w.signal.aborted;
        throw err;
      });
    const raw = (result.message.content ?? '').trim();
    const text = stripThinking(raw).trim();
    // Thinking is decoded (and counted in completion_tokens) but is not part of the summary.
    const thought = (result.reasoning?.length ?? 0) > 0 || text !== raw;
    if (!w.signal.aborted) {
      const isLast = instructionInput(w.plan, w.block, w.focus).isLastBlock;
      const problem = unusableSummary(text, result.finishReason, prompt.request.maxTokens, summarySections(isLast));
      if (problem) throw problem;
    }
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
    if (endpoint >= 0) w.onEnded(endpoint, sent, failed);
    release?.();
    leave();
  }
}

/**
 * A reply that came back but cannot stand in for its block's messages: adopting it would drop them unsummarised. It
 * fails the block like a server error, so the block is retried as any failed block is (the background compaction's
 * retry, the developer's Retry or Regenerate) and a compaction with it is never adopted. A cut-off one is also
 * retried at once with more room (PendingCompaction), since that is the one failure whose remedy is known.
 */
export class UnusableSummaryError extends Error {
  constructor(
    message: string,
    /** The max_tokens the reply was cut off at, when that is why: a retry needs more room, not the same cut. */
    readonly cutAt?: number,
  ) {
    super(message);
    this.name = 'UnusableSummaryError';
  }
}

/**
 * Why a worker's reply is not a usable summary, or undefined when it is. A reply cut off by max_tokens lost its end
 * (with the last block, the next step); a reply with none of the sections its prompt asked for, and no headings or
 * list of its own, is a refusal or chatter, not a summary. A reply with only some of them is kept: models drop a section they had nothing for, and
 * the truncation that loses the later ones shows in the finish reason.
 */
export function unusableSummary(
  text: string,
  finishReason: string | null | undefined,
  maxTokens: number | undefined,
  sections: readonly string[],
): UnusableSummaryError | undefined {
  if (finishReason === 'length') {
    const limit = maxTokens === undefined ? 'max_tokens' : `max_tokens (${maxTokens})`;
    return new UnusableSummaryError(`the summary was cut off at ${limit} before it was complete (finish reason: length)`, maxTokens);
  }
  if (text.length === 0) return new UnusableSummaryError(`the model returned an empty summary (finish reason: ${finishReason ?? 'none'})`);
  if (sections.some((name) => hasSection(text, name)) || structured(text)) return undefined;
  const names = sections.length > 1 ? `${sections.slice(0, -1).join(', ')} and ${sections.at(-1)}` : sections.join('');
  const start = text.replace(/\s+/g, ' ').slice(0, 80);
  return new UnusableSummaryError(
    `the reply is not a summary: it lacks the ${names} sections its prompt asked for ` +
      `(it begins "${start}${text.length > start.length ? '…' : ''}")`,
  );
}

/**
 * Headings or list items on two lines at least: a summary whose sections the model named in the conversation's language
 * ("## DÉCISIONS", "决策：") is still one, and must not fail its block; a refusal is a sentence or two of prose.
 */
function structured(text: string): boolean {
  const lines = text.match(/^[ \t]*(?:#{1,6}[ \t]+\S|[-*\u2022][ \t]+\S|\d+[.)][ \t]+\S|\*\*[^*\n]+\*\*|[^\n]{1,48}[:\uFF1A][ \t]*$)/gm);
  return (lines?.length ?? 0) >= 2;
}

/** A heading line for the section: "DECISIONS:", "## Decisions", "**Current work:**", "1. FACTS". */
function hasSection(text: string, name: string): boolean {
  const words = name.split(' ').join('[ \\t]+');
  return new RegExp(`^[ \\t>#*_\\-\\d.)]*${words}(?![\\w])`, 'im').test(text);
}

/**
 * max_tokens for a retry of a reply cut off: what was asked for when the window beside the prompt has room for it,
 * never less than the plan's. The prompt was fitted beside the plan's max_tokens with a local estimate of its size;
 * a little headroom keeps a larger one from turning the cut into the server's context-length error.
 */
function retryMaxTokens(plan: CompactionPlan, promptTokens: number, planned: number | undefined, wanted: number): number | undefined {
  // The margin the first request left (countingMargin): a retry with more room must not spend it.
  const room = plan.settings.contextWindow - promptTokens - countingMargin(plan.settings.contextWindow);
  const grown = Math.min(wanted, room);
  return planned === undefined || grown > planned ? grown : planned;
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
