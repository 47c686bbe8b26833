import type { ChatMessage } from '../messages';
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
 * Per-line results, kept across calls: one compaction scans the same tool
 * output lines for the planner's head model and again for each block's worker
 * prompt, and the regular expressions are most of pre-trim's cost. Bounded by
 * the characters held, since a line can be long.
 */
const MEMO_CHARS = 16_000_000;
const baseMemo = new Map<string, number>();
const tokenMemo = new Map<string, string[]>();
let memoChars = 0;

function memo<T>(m: Map<string, T>, line: string, f: (l: string) => T): T {
  let v = m.get(line);
  if (v === undefined) {
    if (memoChars + line.length > MEMO_CHARS) {
      baseMemo.clear();
      tokenMemo.clear();
      memoChars = 0;
    }
    v = f(line);
    m.set(line, v);
    memoChars += line.length;
  }
  return v;
}

export function baseSalience(line: string): number {
  return memo(baseMemo, line, scoreLine);
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
  if (pathsIn(line).length > 0 || identifiersIn(line).length > 0 || numbersIn(line).length > 0) return 1;
  return 0;
}

/** Tokens of a text a later line might carry: identifiers, paths, numbers with units, quoted strings. */
export function mentionTokens(text: string): Set<string> {
  const out = new Set<string>([...identifiersIn(text), ...pathsIn(text), ...numbersIn(text)]);
  for (const m of text.matchAll(/`([^`\n]{3,80})`/g)) out.add(m[1]!);
  return out;
}

/** Tokens of a line that could be mentioned elsewhere. */
function lineTokens(line: string): readonly string[] {
  return memo(tokenMemo, line, (l) => [...identifiersIn(l), ...pathsIn(l), ...numbersIn(l)]);
}

/**
 * Salience for the lines of message i: the base score, raised for a line whose
 * identifiers or paths the user or the agent mention after message i (the
 * conversation relied on it).
 */
export function conversationSalience(messages: readonly ChatMessage[]): (index: number) => Salience {
  // token -> index of the last user/assistant message that mentions it
  const lastMention = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.role !== 'user' && m.role !== 'assistant') return;
    for (const t of mentionTokens(messageText(m))) lastMention.set(t, i);
  });
  return (index) => (line) => {
    const base = baseSalience(line);
    if (base >= 4 || base === 0) return base;
    return lineTokens(line).some((t) => (lastMention.get(t) ?? -1) > index) ? 4 : base;
  };
}

/** Lines of a result that a reply refers to (by identifier, path, number or quoted text). */
export function linesReferredBy(result: string, reply: string, maxLines: number): string[] {
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
