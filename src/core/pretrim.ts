import type { ChatMessage } from './messages';
import { messageText } from './messages';
import type { Salience } from './fidelity/salience';
import { baseSalience, conversationSalience, linesReferredBy } from './fidelity/salience';
import { chunkText, selectSegments } from './fidelity/select';

/**
 * The cheap tiers of the compaction ladder, applied to what the summariser
 * sees. Every function returns new message objects; stored originals are never
 * modified, so the archive and `recall` always have the full text.
 */

export interface PretrimOptions {
  /** Tool results newer than this many (counted from the end) are left alone. */
  keepRecentToolResults: number;
  /** Tool outputs longer than this many lines, or chars, are cut to head and tail. */
  maxLines: number;
  maxChars: number;
  headLines: number;
  tailLines: number;
  /**
   * Keep the lines that carry facts (errors, failing tests, decisions, what the
   * conversation mentions later) besides head and tail, within the same
   * budget; and keep, in a cleared result, the lines the next reply used.
   * Off gives the plain ladder (for comparisons).
   */
  salience?: boolean;
}

export const DEFAULT_PRETRIM: PretrimOptions = {
  keepRecentToolResults: 3,
  maxLines: 200,
  maxChars: 16_000,
  headLines: 60,
  tailLines: 60,
  salience: true,
};

/** Lines of a cleared result kept because the next reply referred to them. */
const MAX_REFERRED_LINES = 20;

export interface PretrimReport {
  cleared: string[];
  truncated: { id: string; linesCut: number; charsCut: number }[];
  deduplicated: { id: string; sameAs: string }[];
}

export interface PretrimResult<M extends ChatMessage> {
  messages: M[];
  report: PretrimReport;
}

type WithId = ChatMessage & { id?: string };

function idOf(m: WithId, index: number): string {
  return m.id ?? `#${index}`;
}

function textOf(m: ChatMessage): string {
  return m.content ?? '';
}

function withContent<M extends ChatMessage>(m: M, content: string): M {
  return { ...m, content } as M;
}

export const CLEARED_PLACEHOLDER = '[Old tool result content cleared';

/**
 * Tier 1: a tool result is consumed once an assistant message follows it (the
 * model has read it and acted). Old consumed results become a placeholder that
 * says how to get the text back.
 */
export function clearConsumedToolResults<M extends WithId>(
  messages: readonly M[],
  keepRecent: number,
  keepReferred = true,
): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const toolIdx: number[] = [];
  for (let i = 0; i < messages.length; i++) if (messages[i]!.role === 'tool') toolIdx.push(i);
  const protectedFrom = toolIdx.length - keepRecent;
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      lastAssistant = i;
      break;
    }
  }
  const out = messages.slice();
  for (let k = 0; k < toolIdx.length; k++) {
    const i = toolIdx[k]!;
    if (k >= protectedFrom || i > lastAssistant) continue;
    const m = messages[i]!;
    const text = textOf(m);
    if (text.startsWith(CLEARED_PLACEHOLDER)) continue;
    const placeholder = `${CLEARED_PLACEHOLDER}: ${countLines(text)} lines, ${text.length} chars; recall id ${idOf(m, i)}]`;
    const reply = keepReferred ? nextAssistant(messages, i) : undefined;
    const used = reply ? linesReferredBy(text, messageText(reply), MAX_REFERRED_LINES) : [];
    out[i] = withContent(m, used.length > 0 ? `${placeholder}\nLines the next reply used:\n${used.join('\n')}` : placeholder);
    report.cleared.push(idOf(m, i));
  }
  return { messages: out, report };
}

function nextAssistant<M extends ChatMessage>(messages: readonly M[], i: number): M | undefined {
  for (let k = i + 1; k < messages.length; k++) if (messages[k]!.role === 'assistant') return messages[k];
  return undefined;
}

export function countLines(s: string): number {
  if (s.length === 0) return 0;
  let n = 1;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

/**
 * Tier 2: keep the first and last lines of a huge output and say how much was
 * cut. Output with few but enormous lines (minified files, one-line JSON) is
 * cut by characters instead.
 */
export function truncateHeadTail(
  text: string,
  opts: Pick<PretrimOptions, 'maxLines' | 'maxChars' | 'headLines' | 'tailLines'>,
  salience?: Salience,
): { text: string; linesCut: number; charsCut: number } {
  // Most outputs fit: tell without splitting them into lines (a compaction asks this of every output in the head).
  if (text.length <= opts.maxChars && countLines(text) <= opts.maxLines) return { text, linesCut: 0, charsCut: 0 };
  const lines = text.split('\n');
  if (salience && (lines.length > opts.maxLines || text.length > opts.maxChars)) {
    const r = truncateSalient(text, lines, opts, salience);
    if (r) return r;
  }
  if (lines.length > opts.maxLines) {
    const head = lines.slice(0, opts.headLines);
    const tail = lines.slice(lines.length - opts.tailLines);
    const cut = lines.length - head.length - tail.length;
    const cutChars = text.length - head.join('\n').length - tail.join('\n').length;
    const joined = [...head, `[… ${cut} lines cut …]`, ...tail].join('\n');
    // Long lines can keep the line-trimmed text over the char limit; cut on.
    if (joined.length <= opts.maxChars) return { text: joined, linesCut: cut, charsCut: cutChars };
    const again = truncateChars(joined, opts.maxChars);
    return { text: again.text, linesCut: cut, charsCut: cutChars + again.charsCut };
  }
  if (text.length > opts.maxChars) {
    const r = truncateChars(text, opts.maxChars);
    return { text: r.text, linesCut: 0, charsCut: r.charsCut };
  }
  return { text, linesCut: 0, charsCut: 0 };
}

/** Longest line for which a long output is cut by lines; beyond it, by chunks of a line. */
const MAX_LINE_SEGMENT = 1000;
const CHUNK_CHARS = 400;

/**
 * Head and tail plus the salient lines of the middle, in the same line and
 * char budget as the plain cut. Undefined when the middle holds nothing
 * salient, so plain output stays byte-identical to the plain ladder.
 */
function truncateSalient(
  text: string,
  lines: string[],
  opts: Pick<PretrimOptions, 'maxLines' | 'maxChars' | 'headLines' | 'tailLines'>,
  salience: Salience,
): { text: string; linesCut: number; charsCut: number } | undefined {
  const byLines = lines.length > opts.maxLines || lines.every((l) => l.length <= MAX_LINE_SEGMENT);
  const segments = byLines ? lines : chunkText(text, CHUNK_CHARS);
  const score: Salience = byLines ? salience : (chunk) => Math.max(0, ...chunk.split('\n').map(salience));
  // What the plain cut would drop: the middle lines, or the middle chars.
  const head = lines.length > opts.maxLines ? opts.headLines : undefined;
  let pos = 0;
  const half = Math.floor(opts.maxChars / 2);
  const inMiddle = segments.map((s, i) => {
    const start = pos;
    pos += s.length + (byLines ? 1 : 0);
    if (head !== undefined) return i >= head && i < segments.length - opts.tailLines;
    return start + s.length > half && start < text.length - half;
  });
  if (!segments.some((s, i) => inMiddle[i] && score(s) > 0)) return undefined;
  const lineMode = lines.length > opts.maxLines;
  const budget = {
    maxSegments: lineMode ? opts.headLines + opts.tailLines + 1 : Number.MAX_SAFE_INTEGER,
    maxChars: opts.maxChars,
    headSegments: lineMode ? opts.headLines : segments.length,
    tailSegments: lineMode ? opts.tailLines : segments.length,
  };
  const r = selectSegments(segments, byLines ? '\n' : '', byLines ? 'lines' : 'chars', budget, score);
  return { text: r.text, linesCut: byLines ? r.segmentsCut : 0, charsCut: r.charsCut };
}

function truncateChars(text: string, maxChars: number): { text: string; charsCut: number } {
  const half = Math.floor(maxChars / 2);
  const cut = text.length - 2 * half;
  return { text: `${text.slice(0, half)}\n[… ${cut} chars cut …]\n${text.slice(text.length - half)}`, charsCut: cut };
}

export function truncateLargeToolOutputs<M extends WithId>(messages: readonly M[], opts: PretrimOptions): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const salienceAt = opts.salience === false ? undefined : conversationSalience(messages);
  const out = messages.map((m, i) => {
    const r = truncateToolOutput(m, opts, salienceAt?.(i));
    if (r.message !== m) report.truncated.push({ id: idOf(m, i), linesCut: r.linesCut, charsCut: r.charsCut });
    return r.message;
  });
  return { messages: out, report };
}

/** Tier 2 for one message: a tool output cut to head, tail and salient lines; any other message, or one that fits, as it is. */
export function truncateToolOutput<M extends ChatMessage>(
  m: M,
  opts: PretrimOptions,
  salience: Salience | undefined,
): { message: M; linesCut: number; charsCut: number } {
  if (m.role !== 'tool') return { message: m, linesCut: 0, charsCut: 0 };
  const r = truncateHeadTail(m.content, opts, salience);
  if (r.linesCut === 0 && r.charsCut === 0) return { message: m, linesCut: 0, charsCut: 0 };
  return { message: withContent(m, r.text), linesCut: r.linesCut, charsCut: r.charsCut };
}

/**
 * Tier 3: the same file read five times is one fact. Earlier identical tool
 * outputs are replaced by a pointer to the latest copy, which is the one the
 * agent's later steps depend on.
 */
export function deduplicateToolOutputs<M extends WithId>(messages: readonly M[]): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const latest = new Map<string, number>();
  // Loops, not callbacks made per call: this runs once per block of every compaction, and V8 drops a per-call
  // callback's optimised code at each major collection.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool' && m.content.length >= 200 && !m.content.startsWith(CLEARED_PLACEHOLDER)) latest.set(m.content, i);
  }
  const out = messages.slice();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'tool') continue;
    const last = latest.get(m.content);
    if (last === undefined || last === i) continue;
    const sameAs = idOf(messages[last]!, last);
    report.deduplicated.push({ id: idOf(m, i), sameAs });
    out[i] = withContent(m, `[Identical to the later tool output ${sameAs}; omitted here]`);
  }
  return { messages: out, report };
}

/** All three tiers, cheapest first. */
export function pretrim<M extends WithId>(messages: readonly M[], opts: PretrimOptions = DEFAULT_PRETRIM): PretrimResult<M> {
  const a = clearConsumedToolResults(messages, opts.keepRecentToolResults, opts.salience !== false);
  const b = truncateLargeToolOutputs(a.messages, opts);
  const c = deduplicateToolOutputs(b.messages);
  return {
    messages: c.messages,
    report: {
      cleared: a.report.cleared,
      truncated: b.report.truncated,
      deduplicated: c.report.deduplicated,
    },
  };
}

/**
 * Holds a preserved turn to its token budget (recent-turns strategy) by cutting
 * its largest tool outputs to head and tail, biggest first, until it fits or
 * nothing more can be cut. User and assistant text is never cut.
 */
export function capTurnToBudget<M extends WithId>(
  turn: readonly M[],
  budget: number,
  count: (m: ChatMessage) => number,
): { messages: M[]; cutIds: string[] } {
  const out = turn.slice();
  const cutIds: string[] = [];
  let total = out.reduce((s, m) => s + count(m), 0);
  const order = out
    .map((m, i) => ({ i, n: m.role === 'tool' ? count(m) : 0 }))
    .filter((x) => x.n > 0)
    .sort((a, b) => b.n - a.n);
  for (const { i, n } of order) {
    if (total <= budget) break;
    const m = out[i]!;
    const text = textOf(m);
    const excess = total - budget;
    // Keep at least a few hundred chars so the result still says what happened.
    // The cut marker itself costs a few tokens, hence the 64-char margin.
    const keepChars = Math.max(400, Math.floor(text.length * Math.max(0, (n - excess) / n)) - 64);
    // Errors, failing tests and decisions in the cut part are kept within the same char budget.
    const r = truncateHeadTail(text, { maxLines: Number.MAX_SAFE_INTEGER, maxChars: keepChars, headLines: 0, tailLines: 0 }, baseSalience);
    if (r.charsCut === 0) continue;
    out[i] = withContent(m, r.text);
    cutIds.push(idOf(m, i));
    total += count(out[i]!) - n;
  }
  return { messages: out, cutIds };
}
