import type { ChatMessage } from './messages';

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
}

export const DEFAULT_PRETRIM: PretrimOptions = {
  keepRecentToolResults: 3,
  maxLines: 200,
  maxChars: 16_000,
  headLines: 60,
  tailLines: 60,
};

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
export function clearConsumedToolResults<M extends WithId>(messages: readonly M[], keepRecent: number): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const toolIdx: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'tool') toolIdx.push(i);
  });
  const protectedFrom = toolIdx.length - keepRecent;
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      lastAssistant = i;
      break;
    }
  }
  const out = messages.slice();
  toolIdx.forEach((i, k) => {
    if (k >= protectedFrom || i > lastAssistant) return;
    const m = messages[i]!;
    const text = textOf(m);
    if (text.startsWith(CLEARED_PLACEHOLDER)) return;
    out[i] = withContent(m, `${CLEARED_PLACEHOLDER}: ${countLines(text)} lines, ${text.length} chars; recall id ${idOf(m, i)}]`);
    report.cleared.push(idOf(m, i));
  });
  return { messages: out, report };
}

function countLines(s: string): number {
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
export function truncateHeadTail(text: string, opts: Pick<PretrimOptions, 'maxLines' | 'maxChars' | 'headLines' | 'tailLines'>): { text: string; linesCut: number; charsCut: number } {
  const lines = text.split('\n');
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

function truncateChars(text: string, maxChars: number): { text: string; charsCut: number } {
  const half = Math.floor(maxChars / 2);
  const cut = text.length - 2 * half;
  return { text: `${text.slice(0, half)}\n[… ${cut} chars cut …]\n${text.slice(text.length - half)}`, charsCut: cut };
}

export function truncateLargeToolOutputs<M extends WithId>(messages: readonly M[], opts: PretrimOptions): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const out = messages.map((m, i) => {
    if (m.role !== 'tool') return m;
    const r = truncateHeadTail(m.content, opts);
    if (r.linesCut === 0 && r.charsCut === 0) return m;
    report.truncated.push({ id: idOf(m, i), linesCut: r.linesCut, charsCut: r.charsCut });
    return withContent(m, r.text);
  });
  return { messages: out, report };
}

/**
 * Tier 3: the same file read five times is one fact. Earlier identical tool
 * outputs are replaced by a pointer to the latest copy, which is the one the
 * agent's later steps depend on.
 */
export function deduplicateToolOutputs<M extends WithId>(messages: readonly M[]): PretrimResult<M> {
  const report: PretrimReport = { cleared: [], truncated: [], deduplicated: [] };
  const latest = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.role === 'tool' && m.content.length >= 200 && !m.content.startsWith(CLEARED_PLACEHOLDER)) latest.set(m.content, i);
  });
  const out = messages.map((m, i) => {
    if (m.role !== 'tool') return m;
    const last = latest.get(m.content);
    if (last === undefined || last === i) return m;
    const sameAs = idOf(messages[last]!, last);
    report.deduplicated.push({ id: idOf(m, i), sameAs });
    return withContent(m, `[Identical to the later tool output ${sameAs}; omitted here]`);
  });
  return { messages: out, report };
}

/** All three tiers, cheapest first. */
export function pretrim<M extends WithId>(messages: readonly M[], opts: PretrimOptions = DEFAULT_PRETRIM): PretrimResult<M> {
  const a = clearConsumedToolResults(messages, opts.keepRecentToolResults);
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
    const r = truncateHeadTail(text, { maxLines: Number.MAX_SAFE_INTEGER, maxChars: keepChars, headLines: 0, tailLines: 0 });
    if (r.charsCut === 0) continue;
    out[i] = withContent(m, r.text);
    cutIds.push(idOf(m, i));
    total += count(out[i]!) - n;
  }
  return { messages: out, cutIds };
}

