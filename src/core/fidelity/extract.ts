import type { ChatMessage, MessageKind } from '../messages';
import { TextMemo } from '../textMemo';
import { messageText } from '../messages';
import type { PinItem } from '../session/schema';
import { originalId } from '../session/sessionState';
import { DEFAULT_PRETRIM } from '../pretrim';
import type { PretrimOptions } from '../pretrim';
import type { Fact, FactKind, FactPosition } from './types';
import { EXCERPT_MAX, excerptAround } from './excerpt';
import {
  CONSTRAINT_RE,
  DECISION_RE,
  ERROR_CODE_RE,
  ERROR_LINE_RE,
  EXCEPTION_RE,
  INSTRUCTION_RE,
  allMatches,
  identifiersIn,
  isGenericError,
  numbersIn,
  pathMatches,
  pathsIn,
  testLine,
  withoutPaths,
} from './patterns';

/**
 * Checkable facts in a head: what a summary must keep for the agent to go on
 * without redoing work. Each fact has one key token, matched exactly later, so
 * "kept" never depends on a judgement call. A fact that recurs is one fact,
 * attributed to the first message it appears in.
 */
export type FactSource = ChatMessage & { id?: string; kind?: MessageKind };

export interface ExtractOptions {
  /** The pre-trim thresholds that decide what "the middle of a long output" is. */
  pretrim?: Pick<PretrimOptions, 'maxLines' | 'maxChars' | 'headLines' | 'tailLines' | 'keepRecentToolResults'>;
  /** Kinds to extract (default all). */
  kinds?: readonly FactKind[];
}

/**
 * The facts found so far, in order, and the keys seen of each kind wanted. Most candidates repeat a fact already
 * found (an identifier recurs on every line that uses it): the per-kind sets answer that without building the
 * fact's id.
 */
interface Found {
  facts: Fact[];
  keys: Map<FactKind, Set<string>>;
}

interface Ctx {
  found: Found;
  messageId: string;
  messageIndex: number;
}

function add(c: Ctx, f: Candidate, positionOf: (lineNo: number) => FactPosition): void {
  const keys = c.found.keys.get(f.kind);
  if (!keys || f.key.length < 2 || keys.has(f.key)) return;
  keys.add(f.key);
  const shown = f.text.trim();
  c.found.facts.push({
    id: `${f.kind}:${f.key}`,
    kind: f.kind,
    key: f.key,
    text: excerptAround(shown, f.key),
    ...(shown.length > EXCERPT_MAX ? { cut: true } : {}),
    messageId: c.messageId,
    messageIndex: c.messageIndex,
    position: positionOf(f.lineNo),
    ...f.extra,
  });
}

const TAGGED_STATEMENT_RE = /^[\s#/*>-]*(?:DECISION|CONSTRAINT):/;

/** The most specific checkable token of a statement: path, identifier, number with unit, quoted text. */
export function distinctiveToken(sentence: string): string | undefined {
  const p = pathsIn(sentence)[0];
  if (p) return p;
  const ids = identifiersIn(sentence).filter((x) => !isGenericError(x));
  if (ids.length > 0) return ids.sort((a, b) => b.length - a.length)[0];
  const n = numbersIn(sentence)[0];
  if (n) return n;
  const q = sentence.match(/[`"']([^`"'\n]{3,60})[`"']/);
  return q ? q[1] : undefined;
}

function errorKey(line: string): string | undefined {
  const specific = allMatches(EXCEPTION_RE, line).find((x) => !isGenericError(x));
  if (specific) return specific;
  const code = allMatches(ERROR_CODE_RE, line)[0];
  if (code) return code;
  return distinctiveToken(line.replace(EXCEPTION_RE, ' ')) ?? allMatches(EXCEPTION_RE, line)[0];
}

function sentences(line: string): string[] {
  return line
    .split(/(?<=[.!?])\s+(?=[A-Z`"'(])/)
    .map((s) => s.trim().replace(/^[-*\u2022>]\s+/, '')) // \u2022 is the bullet •
    .filter((s) => s.length >= 6);
}

/** A fact a message's text yields, before de-duplication and before its position is known. */
interface Candidate {
  kind: FactKind;
  key: string;
  text: string;
  lineNo: number;
  extra?: Partial<Fact>;
}

interface Candidates {
  lines: number;
  candidates: Candidate[];
}

/**
 * What a text yields depends only on the text and on whether it is prose (and the user's), so it is
 * remembered: the loss report extracts every head again after each compaction, from message lists the
 * host builds anew, and the regular expressions over a 120K-token head cost tens of ms. Bounded by the
 * characters held.
 */
const memo = new TextMemo(16_000_000);
const byClass = { prose: memo.map<Candidates>(), 'prose:user': memo.map<Candidates>(), output: memo.map<Candidates>() };

function candidatesOf(text: string, prose: boolean, user: boolean): Candidates {
  const m = prose ? (user ? byClass['prose:user'] : byClass.prose) : byClass.output;
  return memo.get(m, text, () => scan(text, prose, user));
}

function scan(text: string, prose: boolean, user: boolean): Candidates {
  const lines = text.split('\n');
  const candidates: Candidate[] = [];
  // Only a key's first occurrence in a text can become a fact (extraction keeps the first it meets), so the memo
  // holds one candidate per key, not one per line that repeats it.
  const seen = new Map<FactKind, Set<string>>();
  const push = (kind: FactKind, key: string, line: string, lineNo: number, extra?: Partial<Fact>) => {
    let keys = seen.get(kind);
    if (!keys) seen.set(kind, (keys = new Set()));
    if (keys.has(key)) return;
    keys.add(key);
    candidates.push(extra ? { kind, key, text: line, lineNo, extra } : { kind, key, text: line, lineNo });
  };
  lines.forEach((line, n) => {
    if (line.trim().length === 0) return;
    const t = testLine(line);
    if (t) push('test', t.name, line, n, { status: t.status });
    if (ERROR_LINE_RE.test(line)) {
      // In prose a line is often a paragraph: the error is the sentence that says it, and its key comes from there.
      const said = prose ? sentences(line).filter((s) => ERROR_LINE_RE.test(s)) : [];
      for (const s of said.length > 0 ? said : [line]) {
        const key = errorKey(s);
        if (key) push('error', key, s, n);
      }
    }
    // Tool output (a design doc, CONTRIBUTING.md) states decisions and constraints only when it tags them.
    const tagged = !prose && TAGGED_STATEMENT_RE.test(line);
    if (prose || tagged) {
      for (const s of tagged ? [line.replace(/^[\s#/*>-]+/, '')] : sentences(line)) {
        const kind: FactKind | undefined = DECISION_RE.test(s)
          ? 'decision'
          : CONSTRAINT_RE.test(s)
            ? 'constraint'
            : user && INSTRUCTION_RE.test(s)
              ? 'instruction'
              : undefined;
        const key = kind ? distinctiveToken(s) : undefined;
        if (kind && key) push(kind, key, s, n);
      }
    }
    const paths = pathMatches(line);
    for (const p of paths) push('path', p.path, line, n);
    // An identifier inside a path is the path's, not a fact of its own. The paths' own places are blanked, in one
    // pass: splitting the line at each path found was quadratic in a long line of many paths (2 MB: 1.9 s).
    for (const x of identifiersIn(withoutPaths(line, paths))) if (x.length >= 4) push('identifier', x, line, n);
    for (const x of numbersIn(line)) push('number', x, line, n);
  });
  return { lines: lines.length, candidates };
}

/** Tool results the cheapest pre-trim tier would clear: old ones an assistant message followed. */
export function consumedToolResults(messages: readonly ChatMessage[], keepRecent: number): Set<number> {
  const toolIdx: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'tool') toolIdx.push(i);
  });
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      lastAssistant = i;
      break;
    }
  }
  const out = new Set<number>();
  const protectedFrom = toolIdx.length - keepRecent;
  toolIdx.forEach((i, k) => {
    if (k < protectedFrom && i < lastAssistant) out.add(i);
  });
  return out;
}

export function extractFacts(messages: readonly FactSource[], pins: readonly PinItem[] = [], opts: ExtractOptions = {}): Fact[] {
  const pt = { ...DEFAULT_PRETRIM, ...opts.pretrim };
  const kinds = new Set<FactKind>(
    opts.kinds ?? ['identifier', 'path', 'number', 'error', 'test', 'decision', 'constraint', 'instruction', 'pin'],
  );
  const found: Found = { facts: [], keys: new Map([...kinds].map((k) => [k, new Set<string>()])) };
  const consumed = consumedToolResults(messages, pt.keepRecentToolResults);
  messages.forEach((m, i) => {
    // The system prompt is the agent's, the pinned block is the pins' (added below).
    if (m.role === 'system' || m.kind === 'pinned') return;
    const c: Ctx = { found, messageId: originalId(m.id ?? `#${i}`), messageIndex: i };
    // Tool names are the agent's vocabulary, not facts of the work: only call arguments count.
    const text =
      m.role === 'assistant' ? [m.content ?? '', ...(m.tool_calls ?? []).map((c) => c.function.arguments)].join('\n') : messageText(m);
    const prose = m.role === 'user' || m.role === 'assistant' || m.kind === 'summary';
    const { lines, candidates } = candidatesOf(text, prose, m.role === 'user');
    const long = m.role === 'tool' && (lines > pt.maxLines || text.length > pt.maxChars);
    const positionOf = (lineNo: number): FactPosition => {
      if (m.kind === 'summary') return 'summary';
      if (m.role === 'user') return 'user';
      if (m.role === 'assistant') return 'assistant';
      if (long && lineNo >= pt.headLines && lineNo < lines - pt.tailLines) return 'long-output-middle';
      return consumed.has(i) ? 'consumed-result' : 'tool-output';
    };
    for (const f of candidates) add(c, f, positionOf);
  });
  const pinKeys = found.keys.get('pin');
  for (const p of pins) {
    if (!pinKeys || pinKeys.has(p.text)) continue;
    pinKeys.add(p.text);
    found.facts.push({
      id: `pin:${p.text}`,
      kind: 'pin',
      key: p.text,
      text: p.text,
      messageId: p.messageId ?? p.id,
      messageIndex: -1,
      position: 'pin',
      mustSurvive: true,
    });
  }
  return found.facts;
}
