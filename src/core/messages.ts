/**
 * The conversation model: OpenAI chat messages plus the bookkeeping the
 * compaction engine needs. Everything here is plain data so it can be
 * serialised into the session log as-is.
 */

import type { MessageKind } from './vocabulary';

export type { MessageKind, Role } from './vocabulary';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The wire shape the OpenAI chat API accepts. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; reasoning?: string }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface MessageMeta {
  /** Stable id; the tail-start pointer and recall refer to messages by it. */
  id: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
  kind: MessageKind;
  /**
   * Local token estimate, cached so that a long session is only tokenised once.
   * Absent until a counter has seen the message.
   */
  tokens?: number;
}

export type StoredMessage = ChatMessage & MessageMeta;

/** A compaction's summary: sent with the user role, but not the user's message, nor in the log. */
export function isSummaryMessage(m: ChatMessage): boolean {
  return (m as Partial<StoredMessage>).kind === 'summary';
}

/** Strips the bookkeeping so the message can be sent to a server. */
export function toWire(m: StoredMessage): ChatMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant': {
      const out: ChatMessage = { role: 'assistant', content: m.content };
      if (m.tool_calls && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
      return out;
    }
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id };
  }
}

/** All text a message contributes to the prompt, used for token counting and search. */
export function messageText(m: ChatMessage): string {
  switch (m.role) {
    case 'assistant': {
      // A loop, not callbacks made per call: this runs for every message a compaction renders or counts.
      let text = m.content ?? '';
      for (const c of m.tool_calls ?? []) {
        const call = `${c.function.name}(${c.function.arguments})`;
        text = text.length > 0 ? `${text}\n${call}` : call;
      }
      return text;
    }
    default:
      return m.content;
  }
}
