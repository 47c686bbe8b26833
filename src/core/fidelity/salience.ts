import type { ChatMessage } from '../messages';
import { TextMemo } from '../textMemo';
import { messageText } from '../messages';
import { CONSTRAINT_RE, DECISION_RE, ERROR_LINE_RE, identifiersIn, numbersIn, pathsIn, testLine } from './patterns';

/**
 * How much a line of tool output matters to a summary, 0 (filler) to 5.
 * Pre-trim keeps the highest-scoring lines of a long output besides its head
 * and tail, so an error in the middle of a 3,000-line log reaches the worker.
 */
export type Salience = (line: string) => number;

const TAGGED_RE = /^\W*(?:DECISION|CONSTRAINT|INSTRUCTION|NOTE|IMPORTANT)\b/;
const TRACE_RE = /^\s*(?:at\s+\S+\s+\(|File "[^"]+", line \d+)/;

/**
 * Per-line and per-text results, kept across calls: every compaction of a
 * session scans the same tool output lines and messages again, and the
 * regular expressions are most of pre-trim's cost. Bounded by the characters
 * held, since a line can be long.
 */
const memo = new TextMemo(16_000_000);
const baseMemo = memo.map<number>();
const tokenMemo = memo.map<string[]>();
const mentionMemo = memo.map<ReadonlySet<string>>();
/** Lines of a result a reply refers to, by result then reply (the results are the session's own strings). */
const referredMemo = memo.map<Map<string, { maxLines: number; lines: string[] }>>();

export function baseSalience(line: string): number {
  return memo.get(baseMemo, line, scoreLine);
}

function scoreLine(line: string): number {
  if (line.trim().length === 0) return 0;
  const t = testLine(line);
  if (t?.status === 'failed') return 5;
  if (ERROR_LINE_RE.test(line)) return 5;
  if (TAGGED_RE.test(line) || DECISION_RE.test(line)) return 4;
  if (t) return 2;
  if (TRACE_RE.test(line)) return 2;
  if (/CONSTRAINT/.test(line) || (CONSTRAINT_RE.test(line) && /\b(?:must|never|always)\b/i.test(line))) return 3;
  // The tokens are needed anyway for a line that scores 1 (conversationSalience looks them up), so find them once.
  if (lineTokens(line).length > 0) return 1;
  return 0;
}

/** Tokens of a text a later line might carry: identifiers, paths, numbers with units, quoted strings. */
export function mentionTokens(text: string): ReadonlySet<string> {
  return memo.get(mentionMemo, text, (t) => {
    const out = new Set<string>([...identifiersIn(t), ...pathsIn(t), ...numbersIn(t)]);
    for (const m of t.matchAll(/`([^`\n]{3,80})`/g)) out.add(m[1]!);
    return out;
  });
}

/** Tokens of a line that could be mentioned elsewhere. */
function lineTokens(line: string): readonly string[] {
  return memo.get(tokenMemo, line, (l) => [...identifiersIn(l), ...pathsIn(l), ...numbersIn(l)]);
}

/** What the user and the agent mention, and where: the conversation-dependent part of salience. */
export interface Mentions {
  /**
   * Salience for the lines of message i: the base score, raised for a line whose identifiers or paths the user or
   * the agent mention after message i (the conversation relied on it). `seen` hears each such lookup and its answer,
   * in order: they are all a line's score depends on besides its own text.
   */
  salience(index: number, seen?: (token: string, later: boolean) => void): Salience;
  /** Whether the user or the agent mention `token` after message `index`. */
  mentionedAfter(token: string, index: number): boolean;
}

export function conversationMentions(messages: readonly ChatMessage[]): Mentions {
  return new ConversationMentions(messages);
}

/**
 * A class, not closures made per call: a line's score runs for every line of every long tool output a compaction
 * cuts, and V8 drops a per-call closure's optimised code at each major collection, so each compaction compiled it
 * again; a method's code lives as long as its class.
 */
class ConversationMentions implements Mentions {
  /** token -> index of the last user/assistant message that mentions it */
  private readonly lastMention = new Map<string, number>();

  constructor(messages: readonly ChatMessage[]) {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (m.role !== 'user' && m.role !== 'assistant') continue;
      for (const t of mentionTokens(messageText(m))) this.lastMention.set(t, i);
    }
  }

  mentionedAfter(token: string, index: number): boolean {
    return (this.lastMention.get(token) ?? -1) > index;
  }

  salience(index: number, seen?: (token: string, later: boolean) => void): Salience {
    return this.lineSalience.bind(this, index, seen);
  }

  private lineSalience(index: number, seen: ((token: string, later: boolean) => void) | undefined, line: string): number {
    const base = baseSalience(line);
    if (base >= 4 || base === 0) return base;
    for (const t of lineTokens(line)) {
      const later = this.mentionedAfter(t, index);
      seen?.(t, later);
      if (later) return 4;
    }
    return base;
  }
}

/** conversationMentions' salience alone. */
export function conversationSalience(messages: readonly ChatMessage[]): (index: number) => Salience {
  const m = conversationMentions(messages);
  return (index) => m.salience(index);
}

/** Lines of a result that a reply refers to (by identifier, path, number or quoted text). */
export function linesReferredBy(result: string, reply: string, maxLines: number): readonly string[] {
  const known = referredMemo.get(result)?.get(reply);
  if (known && known.maxLines >= maxLines) return known.lines.slice(0, maxLines);
  const lines = referredLines(result, reply, maxLines);
  memo.reserve(result.length + reply.length);
  let byReply = referredMemo.get(result);
  if (!byReply) referredMemo.set(result, (byReply = new Map()));
  byReply.set(reply, { maxLines, lines });
  return lines;
}

function referredLines(result: string, reply: string, maxLines: number): string[] {
  const tokens = mentionTokens(reply);
  if (tokens.size === 0) return [];
  const out: string[] = [];
  for (const line of result.split('\n')) {
    if (out.length >= maxLines) break;
    if (line.trim().length === 0) continue;
    for (const t of tokens) {
      if (line.includes(t)) {
        out.push(line.length > 300 ? `${line.slice(0, 297)}...` : line);
        break;
      }
    }
  }
  return out;
}
