import type { CompactionEvent } from '../compaction/events';
import type { StoredMessage, ToolCall } from '../messages';
import type { Verdict } from './judge';

export type TriggerKind = 'budget' | 'block' | 'structural' | 'temporal' | 'reactive' | 'fallback';

/** Everything the agent loop reports, for the webview, the CLI's JSON lines and the log. */
export type AgentEvent =
  | { type: 'step-started'; step: number; contextTokens: number; window: number }
  | { type: 'assistant-delta'; text: string }
  /** The reply streamed so far is void: the connection dropped mid-reply and the request is sent again (attempt n). */
  | { type: 'reply-reset'; attempt: number; reason: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'assistant-message'; message: StoredMessage }
  | { type: 'tool-call'; call: ToolCall; needsApproval: boolean }
  | { type: 'tool-approval'; callId: string; tool: string; approved: boolean; reason?: string }
  | { type: 'tool-result'; callId: string; message: StoredMessage; isError: boolean }
  | { type: 'trigger-fired'; trigger: TriggerKind; usedFraction: number; detail?: string }
  | { type: 'compaction-started'; compactionId: string; background: boolean; focus: string | undefined }
  | { type: 'compaction'; event: CompactionEvent }
  /** The context is full: the turn waits for the background compaction `compactionId`, hurried. */
  | { type: 'waiting-for-compaction'; compactionId: string; usedFraction: number }
  /** A summary made while the agent was idle is judged against the new message before the agent answers it. */
  | { type: 'judging-held-compaction'; compactionId: string }
  | { type: 'judge-verdict'; compactionId: string; attempt: number; verdict: Verdict; nextSteps: number }
  /** The judge rejected `compactionId`'s summary; `rewriteId` is the targeted update that rewrites it, planned already. */
  | { type: 'compaction-amending'; compactionId: string; rewriteId: string; diagnosis: string }
  | { type: 'compaction-held'; compactionId: string; reason: string }
  | { type: 'compaction-adopted'; compactionId: string; tokensBefore: number; tokensAfter: number; judged: boolean }
  | { type: 'compaction-fallback'; compactionId: string; reason: string }
  | { type: 'compaction-superseded'; compactionId: string; focus: string | undefined }
  | { type: 'compaction-failed'; compactionId: string; error: string }
  | { type: 'notice'; text: string }
  /** The server refused a request as longer than its window, which is smaller than the one configured: it is used from now on. */
  | { type: 'window-corrected'; window: number; was: number }
  | { type: 'error'; error: string }
  | { type: 'done'; reason: 'answer' | 'max-steps' | 'cancelled' | 'error'; steps: number };

/** What a window correction tells the user. */
export function windowCorrectionText(e: { window: number; was: number }): string {
  return `The server's context window is ${e.window} tokens, not ${e.was}; using ${e.window}.`;
}

/**
 * One handler per agent event type, for consumers that must say what they do
 * with every event: a new event type is a compile error in each such table
 * instead of falling silently into a `default:` arm.
 */
export type AgentEventTable<C, R = void> = { [K in AgentEvent['type']]: (e: Extract<AgentEvent, { type: K }>, ctx: C) => R };

/** Calls the table's handler for `e` (the cast joins the per-type handlers into one signature). */
export function onAgentEvent<C, R>(table: AgentEventTable<C, R>, e: AgentEvent, ctx: C): R {
  return (table[e.type] as (e: AgentEvent, ctx: C) => R)(e, ctx);
}
