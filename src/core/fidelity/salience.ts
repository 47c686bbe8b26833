import type { ChatMessage } from '../messages';
import { TextMemo } from '../textMemo';
import { messageText } from '../messages';
import { CONSTRAINT_RE, DECISION_RE, ERROR_LINE_RE, identifiersIn, numbersIn, pathsIn, testLine } from './patterns';

/**
 * How much a line of tool output matters to a summary, 0 (filler) and up: 5
 * and a little for an error (baseSalience lists the kinds), more for a line
 * the compaction's focus names (focusSalience). Pre-trim keeps the
 * highest-scoring lines of a long output besides its head and tail, so an
 * error in the middle of a 3,000-line log reaches the worker.
 */
export type Salience = (line: string) => number;

const TAGGED_RE = /^\W*(?:DECISION|CONSTRAINT|INSTRUCTION|NOTE|IMPORTANT)\b/;
/** A stack frame: "at f (file:1:2)", "at file:1:2", "at com.x.Y.f(Y.java:3)", Python's 'File "x.py", line 3'. */
const TRACE_RE = /^\s*(?:at\s+\S+\s+\(|at\s+(?:async\s+)?\S+:\d+|File "[^"]+", line \d+)/;
/** A frame that says where in the project: a location at its end, not in the runtime or a dependency. */
const FRAME_AT_RE = /:\d+(?::\d+)?\)?\s*$|^\s*File "[^"]+", line \d+/;
const FRAME_ELSEWHERE_RE = /\(?node:|node_modules[\\/]|\/lib\/python\d|site-packages[\\/]/;
/**
 * A setting: "KEY=value", "--flag=value", "export KEY=value" (not "==", "=>", "<=", ">="), a line of YAML or JSON
 * that sets a key to a scalar ("maxPoolSize: 48", "pool.max_size: 48", "\"timeout\": 30,"), or a line a tool heads
 * "config:", "[settings]:", "env=". Code says "x = 5" too; its many alike lines make it common in its output (rarity).
 * Two patterns, each tried only on a line with its sign: the one for "=" is unanchored, the other anchored.
 */
const EQ_SETTING_RE = /(?:^|[\s,;({[])(?:--?)?[A-Za-z_][\w.-]*\s?=(?![=>~])\s?\S/;
const COLON_SETTING_RE = new RegExp(
  String.raw`^\s*(?:-\s*)?(?:` +
    [
      String.raw`"?[A-Za-z_][\w.-]*"?\s*:\s+(?:-?\d[\w.]*|true|false|yes|no|on|off|null|"[^"]*"|'[^']*'|[\w-]+[./][\w./-]*)\s*,?\s*$`,
      String.raw`"?(?:[a-z][a-z0-9]*[A-Z]\w*|[A-Za-z][A-Za-z0-9]*_\w+)"?\s*:\s+\S+\s*,?\s*$`,
      String.raw`[[(]?(?:[Cc]onfig(?:uration)?|CONFIG|[Ss]ettings?|SETTINGS?|[Ee]nv(?:ironment)?|ENV|[Oo]ptions?|OPTIONS?|[Pp]aram(?:eter)?s?)[\])]?\s*[:=]`,
    ].join('|') +
    ')',
);

function isSetting(line: string): boolean {
  if (line.length > MAX_SETTING_LINE) return false;
  return (line.includes('=') && EQ_SETTING_RE.test(line)) || (line.includes(':') && COLON_SETTING_RE.test(line));
}

/**
 * Per-line and per-text results, kept across calls: every compaction of a
 * session scans the same tool output lines and messages again, and the
 * regular expressions are most of pre-trim's cost. Bounded by the characters
 * held, since a line can be long.
 */
const memo = new TextMemo(16_000_000);
const infoMemo = memo.map<LineInfo>();
const tokenMemo = memo.map<string[]>();
const mentionMemo = memo.map<ReadonlySet<string>>();
/** Lines of a result a reply refers to, by result then reply (the results are the session's own strings). */
const referredMemo = memo.map<Map<string, { maxLines: number; lines: string[] }>>();

/**
 * What a line's text alone says of it: its score, and its shape, which near-identical lines of an output share (a
 * kind and the line's first word, digits masked: every passing test is one shape, "step 12 finished" and "step 13
 * finished" are one, "config: QUANTUM_FLUX_LIMIT=7741" is its own).
 */
interface LineInfo {
  score: number;
  shape: string;
}

const FILLER: LineInfo = { score: 0, shape: '' };

/**
 * The score of a line by its text alone: a failed test or an error 5, a decision or tagged statement 4, a
 * constraint, a setting or a stack frame in the project 3, a passing test or a line with a path 2, any other line
 * with an identifier or a number with a unit 1. How often alike lines repeat in the output lowers the score of
 * each (conversationMentions), so hundreds of passing tests do not outrank one setting.
 */
export function baseSalience(line: string): number {
  return lineInfo(line).score;
}

function lineInfo(line: string): LineInfo {
  return memo.get(infoMemo, line, describeLine);
}

function describeLine(line: string): LineInfo {
  if (line.trim().length === 0) return FILLER;
  const t = testLine(line);
  if (t?.status === 'failed') return { score: 5, shape: 'failed' };
  if (ERROR_LINE_RE.test(line)) return { score: 5, shape: `error ${leadWord(line)}` };
  if (TAGGED_RE.test(line) || DECISION_RE.test(line)) return { score: 4, shape: `tagged ${leadWord(line)}` };
  if (t) return { score: 2, shape: 'passed' };
  if (TRACE_RE.test(line)) return { score: FRAME_AT_RE.test(line) && !FRAME_ELSEWHERE_RE.test(line) ? 3 : 1, shape: 'frame' };
  if (/CONSTRAINT/.test(line) || (CONSTRAINT_RE.test(line) && /\b(?:must|never|always)\b/i.test(line))) {
    return { score: 3, shape: `constraint ${leadWord(line)}` };
  }
  if (isSetting(line)) return { score: 3, shape: `setting ${leadWord(line)}` };
  // The tokens are needed anyway for a line that scores (conversationSalience looks them up), so find them once.
  const paths = pathsIn(line);
  const tokens = memo.get(tokenMemo, line, () => [...identifiersIn(line), ...paths, ...numbersIn(line)]);
  if (paths.length > 0) return { score: 2, shape: `path ${leadWord(line)}` };
  if (tokens.length > 0) return { score: 1, shape: `token ${leadWord(line)}` };
  return FILLER;
}

/** No setting line is this long; a longer line is data (minified code, JSON), scored by its tokens. */
const MAX_SETTING_LINE = 1000;

/**
 * A line's first word with two letters in a row among its first three (a timestamp or a counter before it is
 * skipped), digits masked, at most 40 characters. Scanned by hand: it runs for nearly every line that scores.
 */
function leadWord(line: string): string {
  let first = '';
  let i = 0;
  for (let w = 0; w < 3; w++) {
    while (i < line.length && isSpace(line.charCodeAt(i))) i++;
    const from = i;
    let letters = 0;
    let pair = false;
    while (i < line.length && !isSpace(line.charCodeAt(i))) {
      const c = line.charCodeAt(i++) | 0x20;
      letters = c >= 0x61 && c <= 0x7a ? letters + 1 : 0;
      if (letters >= 2) pair = true;
    }
    const word = line.slice(from, Math.min(i, from + 40));
    if (w === 0) first = word;
    if (pair) return masked(word);
    if (i >= line.length) break;
  }
  return masked(first);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13;
}

const DIGIT_RE = /\d/;
const DIGITS_RE = /\d+/g;

function masked(word: string): string {
  return DIGIT_RE.test(word) ? word.replace(DIGITS_RE, '0') : word;
}

/**
 * How much one line of a shape is worth beside its alike lines in the output: 1 for a line of its own shape, a half
 * for two, a tenth for about 500 (1 / (1 + log2 n)).
 */
function rarity(n: number): number {
  return n <= 1 ? 1 : 1 / (1 + Math.log2(n));
}

/**
 * How many lines of an output have each shape, counted when first asked. A line longer than MAX_COUNTED_LINE is not
 * scored by lines (pre-trim cuts such an output by chunks, and scoring it whole would run every pattern over
 * megabytes), so it is not counted; a shape never counted is a shape of one line.
 */
class ShapeCounts {
  private counts: Map<string, number> | undefined;

  /** `message`: the one whose lines are scored (pre-trim asks a salience of every message, and cuts few). */
  constructor(private readonly message: ChatMessage | undefined) {}

  of(shape: string): number {
    if (!this.counts) this.counts = countShapes(this.message ? messageText(this.message) : '');
    return this.counts.get(shape) ?? 1;
  }
}

const MAX_COUNTED_LINE = 1000;

function countShapes(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let from = 0; from <= text.length;) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    if (to - from <= MAX_COUNTED_LINE) {
      const shape = lineInfo(text.slice(from, to)).shape;
      if (shape) counts.set(shape, (counts.get(shape) ?? 0) + 1);
    }
    from = to + 1;
  }
  return counts;
}

/** Tokens of a text a later line might carry: identifiers, paths, numbers with units, quoted strings. */
export function mentionTokens(text: string): ReadonlySet<string> {
  return memo.get(mentionMemo, text, (t) => {
    const out = new Set<string>([...identifiersIn(t), ...pathsIn(t), ...numbersIn(t)]);
    for (const m of t.matchAll(/`([^`\n]{3,80})`/g)) out.add(m[1]!);
    return out;
  });
}

/** What the user and the agent mention, and where: the conversation-dependent part of salience. */
export interface Mentions {
  /**
   * Salience for the lines of message i: the base score, raised for a line whose identifiers or paths the user or
   * the agent mention after message i (the conversation relied on it), and lowered by how many alike lines message
   * i's text holds (a shape repeated hundreds of times is worth little per line). `seen` hears each mention lookup
   * and its answer, in order: they are all a line's score depends on besides its own text and message i's.
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

  constructor(private readonly messages: readonly ChatMessage[]) {
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
    return this.lineSalience.bind(this, index, seen, new ShapeCounts(this.messages[index]));
  }

  private lineSalience(
    index: number,
    seen: ((token: string, later: boolean) => void) | undefined,
    shapes: ShapeCounts,
    line: string,
  ): number {
    const info = lineInfo(line);
    let score = info.score;
    if (score === 0) return 0;
    if (score < 4) {
      for (const t of memo.get(tokenMemo, line, lineTokensOf)) {
        const later = this.mentionedAfter(t, index);
        seen?.(t, later);
        if (later) {
          score = 4;
          break;
        }
      }
    }
    // An error, a decision or a mentioned line stays above every other (its rarity orders it among its kind); below
    // them the rarity scales the score, so a setting or a rare identifier outranks the hundredth passing test.
    const r = rarity(shapes.of(info.shape));
    return score >= 4 ? score + r / 2 : score * r;
  }
}

/** Tokens of a line that could be mentioned elsewhere. */
function lineTokensOf(l: string): string[] {
  return [...identifiersIn(l), ...pathsIn(l), ...numbersIn(l)];
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
