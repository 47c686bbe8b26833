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
  isLocalisedSeverity,
  LOCALISED_SEVERITY_RE,
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
  const code = allMatches(ERROR_CODE_RE, line).find((c) => !isLocalisedSeverity(c));
  if (code) return code;
  return diagnosticKey(line) ?? distinctiveToken(line.replace(EXCEPTION_RE, ' ')) ?? allMatches(EXCEPTION_RE, line)[0];
}

/**
 * Compilers, linkers, make, ESLint, Go and npm print where before what ("src/net/socket.c:214:17: error: …",
 * "/usr/bin/ld: main.o: …"). Keyed on the line's first path, every error in one file was one fact, and a summary
 * that only named the file kept it; so their key comes from the message. These shapes are anchored or bounded:
 * the key is read only from the line's first DIAGNOSTIC_MAX characters, where every toolchain puts them.
 */
const DIAGNOSTIC_MAX = 1000;
const UNDEFINED_REF_RE = /undefined reference to [`'"\u2018]([^`'"\u2019\s]+)[`'"\u2019]/;
const CRASH_RE = /\b(?:[Ss]egmentation fault|[Bb]us error|[Aa]borted|[Ii]llegal instruction|[Ff]loating point exception|[Kk]illed)\b/;
const MAKE_RE = /^\s*(?:g|mingw32-)?make(?:\[\d+\])?: \*\*\* (.+)$/;
/** make's failed target: "[Makefile:42: build/net/socket.o] Error 1", the recipe's location before it. */
const MAKE_TARGET_RE = /^\[(?:[^\]]*?:\d+: )?([^\]]+)\]/;
const LD_RE = /^\s*(?:\S*\/)?(?:ld(?:\.\w+)?|ld64(?:\.lld)?|lld):\s+(.+)$/;
/** What ld says before its message: the object, the function, the section ("main.c:(.text+0x1a):"). */
const LD_WHERE_RE = /^(?:[^\s:]+:(?:\([^)]*\):)?\s+|in function [`'\u2018][^`'\u2019]*[`'\u2019]:\s+)+/;
const PYTEST_RE = /^\s*FAILED (\S+::\S+)/;
/** "…: error: msg", "…: fatal error: msg", "…(12): error C2065: msg", "error[E0425]: msg", "runtime error: msg". */
const SEVERITY_RE = /(?:^|[\s:)])(?:fatal\s+)?error(?:\s+[A-Z]+\d+|\[\w+\])?:\s*(\S.*)$/;
/** ESLint's stylish format: "  12:5  error  'x' is not defined  no-undef", the rule after two spaces. */
const ESLINT_RE = /^\s*\d+:\d+\s+error\s+(\S.*?)(?:\s{2,}[@\w/-]+)?\s*$/;
const GO_RE = /\.go:\d+:\d+: (\S.*)$/;
const NPM_RE = /^\s*npm (?:ERR!|error) (\S.*)$/;
const MISSING_SCRIPT_RE = /^missing script:\s*(?:"[^"\s]+"|'[^'\s]+'|[^"'\s]+)/i;
const MACOS_LD_RE = /\bUndefined symbols for architecture [\w-]+/;

function diagnosticKey(full: string): string | undefined {
  const line = full.length > DIAGNOSTIC_MAX ? full.slice(0, DIAGNOSTIC_MAX) : full;
  const ref = UNDEFINED_REF_RE.exec(line);
  if (ref) return ref[1];
  // A crash names no culprit but the signal; the program after it is only where it happened.
  if (line.includes('egmentation fault') || line.includes('(core dumped)')) return CRASH_RE.exec(line)?.[0];
  const mac = MACOS_LD_RE.exec(line);
  if (mac) return mac[0];
  const make = MAKE_RE.exec(line);
  if (make) return MAKE_TARGET_RE.exec(make[1]!)?.[1] ?? messageKey(make[1]!);
  const ld = LD_RE.exec(line);
  if (ld) return messageKey(ld[1]!.replace(LD_WHERE_RE, ''));
  const npm = NPM_RE.exec(line);
  // The script's name alone ("build") is kept by any summary that says the build failed: the phrase says it is missing.
  if (npm) return MISSING_SCRIPT_RE.exec(npm[1]!)?.[0] ?? messageKey(npm[1]!);
  const pytest = PYTEST_RE.exec(line);
  if (pytest) return pytest[1];
  const message = (SEVERITY_RE.exec(line) ?? ESLINT_RE.exec(line) ?? GO_RE.exec(line) ?? LOCALISED_SEVERITY_RE.exec(line))?.[1];
  return message === undefined ? undefined : messageKey(message);
}

/** A quoted token that names something: an identifier, a member or a file, not a phrase or a punctuator. */
const NAME_RE = /^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[\w$]+)*$/;
/** Quoted text, however short, so that the quotes pair up: "expected ';' before 'return'" quotes no " before ". */
const QUOTED_RE = /[`'"\u2018\u201C]([^`'"\u2019\u201D\n]{1,80})[`'"\u2019\u201D]/g;
/** The longest message kept whole as a key: a summary that quotes the error has it; a longer one is cut at a word. */
const MESSAGE_KEY_MAX = 60;

/**
 * The most specific part of a diagnostic's message: the name it quotes ("has no member named 'retry_budget'";
 * the longest name when it quotes several, the last of equals, since the thing missing comes after what it is
 * missing from), else a path, identifier or number in it, else the message itself: "ld returned 1 exit status",
 * "'x' is not defined" say what failed where a one-letter name alone would say nothing.
 */
function messageKey(message: string): string | undefined {
  let name: string | undefined;
  let phrase: string | undefined;
  for (const q of allMatches(QUOTED_RE, message)) {
    if (q.length < 2) continue;
    if (NAME_RE.test(q)) {
      if (!name || q.length >= name.length) name = q;
    } else if (!phrase && q.trim().length >= 3) phrase = q;
  }
  // Quoted text was weighed above; left in, a quote closing one token and one opening the next would pair up.
  const found = name ?? phrase ?? distinctiveToken(message.replace(QUOTED_RE, ' '));
  if (found) return found;
  const text = message.replace(/[\s.:;,]+$/, '').replace(/\.\s+Stop$/, '');
  if (text.length <= MESSAGE_KEY_MAX) return text;
  const cut = text.lastIndexOf(' ', MESSAGE_KEY_MAX);
  return text.slice(0, cut > 0 ? cut : MESSAGE_KEY_MAX);
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
