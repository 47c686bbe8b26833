import { isSummaryMessage, type ChatMessage } from './messages';

/**
 * A turn is one user message plus everything generated in response, up to the
 * next user message. Messages before the first user message (the system prompt,
 * or agent output in a session that never had a user) belong to no turn.
 */
export interface Turn {
  /** Index of the turn's user message. */
  start: number;
  /** One past the last message of the turn. */
  end: number;
}

export function splitIntoTurns(messages: readonly ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (let i = 0; i < messages.length; i++) {
    // A summary has the user role but opens no turn: it is what the user's earlier turns came to.
    if (messages[i]!.role !== 'user' || isSummaryMessage(messages[i]!)) continue;
    if (turns.length > 0) turns[turns.length - 1]!.end = i;
    turns.push({ start: i, end: messages.length });
  }
  return turns;
}

/** Indices of all the user's messages (not summaries), oldest first. */
export function userMessageIndices(messages: readonly ChatMessage[]): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'user' && !isSummaryMessage(m)) out.push(i);
  });
  return out;
}

/** Number of leading system messages; they are never part of the head or the tail. */
export function leadingSystemCount(messages: readonly ChatMessage[]): number {
  let n = 0;
  while (n < messages.length && messages[n]!.role === 'system') n++;
  return n;
}
