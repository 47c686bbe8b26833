/**
 * A deterministic extractive summarizer standing in for the model on
 * compaction requests. See README.md ("Compaction requests") for exactly what
 * it detects. It only ever quotes sentences from the target range, prefers
 * sentences that carry identifiers, paths and numbers, puts focus matches
 * first, and stays near a length prior whatever the input size.
 */
import { contentText, type WireMessage } from './template';

export const SUMMARIZE_MARKER = 'SPLITPOINT-SUMMARIZE';
const MARKER_RE = /^[ \t>*_`]*SPLITPOINT-SUMMARIZE from message #?([^\s]+) to the end\b/m;
// Fence tags may carry a random suffix (<TARGET_BLOCK_3fa9c1>); the close tag must repeat it.
const TARGET_OPEN_RE = /<TARGET_BLOCK(_[0-9a-f]+)?>/;

export type Verbosity = 'concise' | 'detailed' | 'very detailed';

export interface CompactionRequest {
  layout: 'cache-aligned' | 'target-block';
  /** Index of the first target message (cache-aligned layout only). */
  fromIndex?: number;
  /** The target range, one unit per message (cache-aligned) or one unit for the whole block. */
  units: Array<{ role: string; text: string }>;
  /** The instruction text, with the target block cut out. */
  instruction: string;
  focus: string | undefined;
  wantCurrentWork: boolean;
  verbosity: Verbosity;
  targetTokens: number | undefined;
}

function messageText(m: WireMessage): string {
  const calls = (m.tool_calls ?? []).map((c) => `${c.function.name}(${c.function.arguments})`);
  return [contentText(m.content), ...calls].filter((s) => s.length > 0).join('\n');
}

function parseInstruction(instruction: string) {
  const focusLines = [...instruction.matchAll(/^[ \t]*FOCUS:[ \t]*(.+)$/gm)].map((m) => m[1].trim()).filter((s) => s.length > 0);
  // A targeted update's reviewer notes (fenced data) say what the earlier summary lacked: weigh them like a focus.
  for (const m of instruction.matchAll(/<REVIEW_NOTES(?:_[0-9a-f]+)?>\n([\s\S]*?)\n<\/REVIEW_NOTES(?:_[0-9a-f]+)?>/g)) {
    const note = m[1].trim().replace(/\s+/g, ' ');
    if (note) focusLines.push(note);
  }
  const v = instruction.match(/^[ \t]*VERBOSITY:[ \t]*(concise|very detailed|detailed)\b/im);
  const t = instruction.match(/^[ \t]*TARGET_TOKENS:[ \t]*(\d+)/m);
  return {
    focus: focusLines.length > 0 ? focusLines.join(' ') : undefined,
    wantCurrentWork: /CURRENT WORK/.test(instruction),
    verbosity: (v ? v[1].toLowerCase() : 'detailed') as Verbosity,
    targetTokens: t ? Number(t[1]) : undefined,
  };
}

const TRANSCRIPT_HEAD = /^\[#\d+ (system|user|assistant|tool)\b[^\]\n]*\]$/gm;

/** Splits a rendered transcript ("[#12 assistant]" headers) back into per-message units. */
function transcriptUnits(text: string): Array<{ role: string; text: string }> {
  const heads = [...text.matchAll(TRANSCRIPT_HEAD)];
  if (heads.length === 0) return [{ role: 'transcript', text }];
  const units: Array<{ role: string; text: string }> = [];
  const before = text.slice(0, heads[0].index).trim();
  if (before) units.push({ role: 'transcript', text: before });
  heads.forEach((h, i) => {
    const start = h.index! + h[0].length;
    const end = i + 1 < heads.length ? heads[i + 1].index! : text.length;
    units.push({ role: h[1], text: text.slice(start, end).trim() });
  });
  return units;
}

/** Recognises a compaction request in either layout; undefined for anything else. */
export function detectCompaction(messages: WireMessage[]): CompactionRequest | undefined {
  const n = messages.length;
  if (n === 0) return undefined;
  const last = messages[n - 1];
  const lastText = last.role === 'user' ? contentText(last.content) : '';

  // Layout B: the last user message wraps the target in <TARGET_BLOCK> tags. Checked first so
  // that a marker line quoted inside the block cannot turn it into layout A. The instruction is
  // the text outside the block, minus any <CONTEXT>…</CONTEXT> (conversation data, not instruction).
  const openMatch = TARGET_OPEN_RE.exec(lastText);
  const open = openMatch ? openMatch.index : -1;
  const targetOpen = openMatch?.[0] ?? '';
  const targetClose = `</TARGET_BLOCK${openMatch?.[1] ?? ''}>`;
  const close = lastText.lastIndexOf(targetClose);
  if (open >= 0 && close > open) {
    const inside = lastText.slice(open + targetOpen.length, close);
    const outside = (lastText.slice(0, open) + '\n' + lastText.slice(close + targetClose.length)).replace(
      /<CONTEXT(_[0-9a-f]+)?>[\s\S]*?<\/CONTEXT\1>/g,
      '',
    );
    return { layout: 'target-block', units: transcriptUnits(inside), instruction: outside, ...parseInstruction(outside) };
  }

  // Layout A: the last user message carries the marker line.
  const m = lastText.match(MARKER_RE);
  if (!m) return undefined;
  const ref = m[1].replace(/[.,;:]+$/, '');
  let from: number;
  if (/^\d+$/.test(ref)) {
    from = Number(ref);
  } else {
    // A message id: the first earlier message whose text contains it.
    from = messages.findIndex((msg, i) => i < n - 1 && messageText(msg).includes(ref));
    if (from < 0) from = messages[0]?.role === 'system' ? 1 : 0;
  }
  const units = messages
    .slice(Math.max(0, from), n - 1)
    .map((msg) => ({ role: msg.role, text: messageText(msg) }))
    .filter((u) => u.text.trim().length > 0);
  return { layout: 'cache-aligned', fromIndex: from, units, instruction: lastText, ...parseInstruction(lastText) };
}

// ---------------------------------------------------------------- extraction

const PATH_RE = new RegExp(
  String.raw`(?:^|[\s(\`'"[])((?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+|[\w-]+\.(?:` +
    String.raw`ts|tsx|js|mjs|cjs|json|md|py|rs|go|java|c|h|cc|cpp|yaml|yml|toml|sh|txt|css|html|sql|lock|ini|cfg|env))\b`,
  'g',
);
const IDENT_RES = [
  /\b[a-z]+(?:[A-Z][a-z0-9]*)+\b/g, // camelCase
  /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g, // PascalCase with an inner capital
  /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g, // snake_case
  /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, // SCREAMING_CASE
  /\b[A-Za-z_]\w*\(\)/g, // call()
  /--[a-z][\w-]+/g, // --flags
];
const NUM_RE = /\b\d+(?:[.,]\d+)*\b/g;

export function signals(sentence: string): { paths: string[]; idents: string[]; numbers: string[] } {
  const paths = [...sentence.matchAll(PATH_RE)].map((m) => m[1]);
  const idents = IDENT_RES.flatMap((re) => [...sentence.matchAll(re)].map((m) => m[0]));
  const numbers = [...sentence.matchAll(NUM_RE)].map((m) => m[0]);
  return { paths, idents, numbers };
}

/** Identifiers, paths and numbers in a text, lowercased, as a set. */
export function keyTerms(text: string): Set<string> {
  const s = signals(text);
  return new Set([...s.paths, ...s.idents, ...s.numbers].map((x) => x.toLowerCase()));
}

// Case matters for names and codes (ENOENT, not "every"); a leading "error:" may be any case.
const ERROR_RE =
  /\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b|\b(?:E[A-Z]{3,}|E_[A-Z0-9_]+|ERR_[A-Z0-9_]+)\b|\berror TS\d+|^(?:[Ee]rror|ERROR|[Ff]atal|FATAL|panic|Traceback)\b/;
const FAILED_TEST_RE = /^(?:[✗✖×]|FAIL(?:ED)?\b|not ok\b)|::\S+\s+FAILED\b/;
const PASSED_TEST_RE = /^(?:[✓✔√]|PASS(?:ED)?\b|ok \d+)|::\S+\s+PASSED\b/;
const STATEMENT_RE = /^(?:DECISION|CONSTRAINT)\b|\b(?:decided|we will use|going with|settled on|must not|must never|never)\b/i;
const QUANTITY_RE = new RegExp(
  String.raw`\b\d+(?:\.\d+)?\s?(?:%|ms|s|sec|seconds|min|minutes|h|hours|KB|MB|GB|TB|KiB|MiB|GiB|bytes|tokens|rows|connections|retries|workers|x)` +
    String.raw`(?![\w])|\bv?\d+\.\d+\.\d+\b`,
  'g',
);
const INSTRUCTION_START = /^(?:please|make sure|remember|run|use|add|keep|call|avoid|prefer)\b/i;

/**
 * Salience: what a careful summariser keeps first when the budget is short.
 * Failures before statements of intent, statements before bare tokens, bare
 * tokens before prose. Deterministic, so a test can predict what survives.
 */
export function salience(sentence: string, role = 'assistant'): number {
  const s = signals(sentence);
  // A bare integer (a counter, a line number) says little; a quantity with its unit is a fact.
  let v = 2 * s.paths.length + 2 * s.idents.length + 2 * (sentence.match(QUANTITY_RE) ?? []).length;
  if (ERROR_RE.test(sentence) || FAILED_TEST_RE.test(sentence)) v += 6;
  else if (STATEMENT_RE.test(sentence)) v += 4;
  else if (role === 'user' && INSTRUCTION_START.test(sentence)) v += 3;
  else if (PASSED_TEST_RE.test(sentence)) v += 2;
  return v;
}

function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim().replace(/^[-*•]\s+/, '');
    if (t.length < 3) continue;
    for (const s of t.split(/(?<=[.!?])\s+(?=[A-Z`'"([/])/)) {
      const c = s.trim();
      if (c.length >= 3) out.push(c.length > 240 ? `${c.slice(0, 237)}...` : c);
    }
  }
  return out;
}

type Section = 'DECISIONS' | 'FACTS' | 'OPEN' | 'ERRORS' | 'CONSTRAINTS';
const SECTIONS: Section[] = ['DECISIONS', 'FACTS', 'OPEN', 'ERRORS', 'CONSTRAINTS'];

function classify(s: string): Section {
  if (FAILED_TEST_RE.test(s) || ERROR_RE.test(s)) return 'ERRORS';
  if (
    /\b(error|errors|exception|fail(?:s|ed|ure)?|traceback|cannot|can't|refused|crash(?:ed)?|panic|ENOENT|EACCES|TypeError|undefined is not)\b/i.test(
      s,
    )
  ) {
    return 'ERRORS';
  }
  if (/\b(TODO|FIXME|open question|pending|not yet|unresolved|follow[- ]up|still need|remaining)\b|\?$/i.test(s)) return 'OPEN';
  if (/\b(must|never|always|do not|don't|should not|shouldn't|required|at most|at least|only|forbidden|no more than)\b/i.test(s))
    return 'CONSTRAINTS';
  if (/\b(decided|decide|chose|choose|chosen|will use|we'll|going to|switch(?:ed)? to|instead of|plan is|agreed|opted)\b/i.test(s))
    return 'DECISIONS';
  return 'FACTS';
}

const STOP = new Set([
  'the',
  'and',
  'for',
  'with',
  'that',
  'this',
  'from',
  'keep',
  'about',
  'into',
  'what',
  'when',
  'where',
  'which',
  'plan',
  'all',
]);

function focusTerms(focus: string | undefined): string[] {
  if (!focus) return [];
  return [
    ...new Set(
      focus
        .toLowerCase()
        .split(/[^\w./-]+/)
        .filter((w) => w.length >= 3 && !STOP.has(w)),
    ),
  ];
}

export interface SummarizerOptions {
  /** The length prior: summaries aim at about this many tokens whatever the input (default 500). */
  targetTokens?: number;
  /** The request's max_tokens: the whole summary stays within it. */
  maxTokens?: number;
  /** Token counter for the length budget. */
  count: (text: string) => number;
}

interface Candidate {
  text: string;
  role: string;
  unit: number;
  pos: number;
  score: number;
  focus: boolean;
  section: Section;
}

const unitOf = (c: Candidate) => c.unit;

/** CURRENT WORK and NEXT STEP, from the end of the range (only the last block asks for them). */
function currentWork(all: Candidate[], chosen: Candidate[]): string[] {
  // CURRENT WORK: the last (up to two) sentences of the last assistant turn in the range.
  // NEXT STEP: a user request that came after it, else the newest open item, else that turn.
  const lastAssistant = [...all].reverse().find((c) => c.role === 'assistant' || c.role === 'transcript');
  const lastUser = [...all].reverse().find((c) => c.role === 'user');
  const open = chosen.filter((c) => c.section === 'OPEN').sort((a, b) => b.pos - a.pos)[0];
  const anchor = lastAssistant ?? all[all.length - 1];
  const current = anchor ? all.filter((c) => c.role === anchor.role && c.pos <= anchor.pos && c.pos >= anchor.pos - 1) : [];
  const sameTurn = current.length === 2 && unitOf(current[0]) === unitOf(current[1]) ? current : current.slice(-1);
  const next = lastUser && (!lastAssistant || lastUser.pos > lastAssistant.pos) ? lastUser : (open ?? anchor);
  return [
    'CURRENT WORK:',
    `- ${sameTurn.length > 0 ? sameTurn.map((c) => c.text).join(' ') : 'none'}`,
    'NEXT STEP:',
    `- ${next ? next.text : 'none'}`,
  ];
}

/**
 * Keeps what the length budget allows, by salience: focus matches first, then
 * the most salient sentences, then plain prose until the summary is about the
 * requested size (a real model writes about what it is asked for, so decode
 * volume follows the target). Never more than max_tokens.
 */
export function summarize(req: CompactionRequest, opts: SummarizerOptions): string {
  // An explicit TARGET_TOKENS line wins; otherwise the length prior, scaled by the verbosity.
  const factor = req.verbosity === 'concise' ? 0.6 : req.verbosity === 'very detailed' ? 1.6 : 1;
  let budget = Math.max(40, req.targetTokens ?? Math.round((opts.targetTokens ?? 500) * factor));
  if (opts.maxTokens !== undefined) budget = Math.min(budget, Math.max(16, opts.maxTokens - 4));
  const terms = focusTerms(req.focus);
  const all: Candidate[] = [];
  let pos = 0;
  for (const [unitIndex, u] of req.units.entries()) {
    for (const text of splitSentences(u.text)) {
      const lower = text.toLowerCase();
      all.push({
        text,
        role: u.role,
        unit: unitIndex,
        pos: pos++,
        score: salience(text, u.role),
        focus: terms.some((t) => lower.includes(t)),
        section: classify(text),
      });
    }
  }
  const seen = new Set<string>();
  const candidates = all
    .filter((c) => {
      const k = c.text.toLowerCase().replace(/\s+/g, ' ');
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => Number(b.focus) - Number(a.focus) || b.score - a.score || a.pos - b.pos);

  // The section skeleton and the closing lines are paid for before any item.
  const tail = req.wantCurrentWork ? currentWork(all, []) : [];
  let used = opts.count(`${SECTIONS.map((s) => `${s}:\n- none`).join('\n')}\n${tail.join('\n')}`);
  const chosen: Candidate[] = [];
  // The developer asked for the focus to survive: focus matches may overrun the target, never max_tokens.
  const hardCap = Math.max(budget, opts.maxTokens !== undefined ? opts.maxTokens - 4 : 2 * budget);
  for (const c of candidates) {
    const cost = opts.count(c.text) + 2;
    if (chosen.length > 0 && used + cost > (c.focus ? hardCap : budget)) continue;
    if (chosen.length === 0 && used + cost > budget && c.score === 0 && !c.focus) continue;
    chosen.push(c);
    used += cost;
  }

  const lines: string[] = [];
  for (const sec of SECTIONS) {
    const items = chosen.filter((c) => c.section === sec).sort((a, b) => Number(b.focus) - Number(a.focus) || a.pos - b.pos);
    lines.push(`${sec}:`);
    if (items.length === 0) lines.push('- none');
    for (const c of items) lines.push(`- ${c.text}`);
  }
  if (req.wantCurrentWork) lines.push(...currentWork(all, chosen));
  return lines.join('\n');
}

// ---------------------------------------------------------------- judge

export const JUDGE_MARKER = 'SPLITPOINT-JUDGE';

/** A judge request: the marker line plus <SUMMARY>…</SUMMARY> and <NEXT_STEPS>…</NEXT_STEPS>. */
export function detectJudge(messages: WireMessage[]): { summary: string; nextSteps: string } | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return undefined;
  const text = contentText(last.content);
  if (!text.includes(JUDGE_MARKER)) return undefined;
  const pick = (tag: string) => {
    const m = text.match(new RegExp(`<${tag}(_[0-9a-f]+)?>([\\s\\S]*?)</${tag}\\1>`));
    return m ? m[2]! : '';
  };
  return { summary: pick('SUMMARY'), nextSteps: pick('NEXT_STEPS') };
}

/**
 * Deterministic verdict: alignment = share of the next steps' identifiers,
 * paths and numbers that the summary contains (×10); non_contradiction = share
 * of the next steps' numbers the summary agrees with (×10, 10 when none).
 */
export function judge(input: { summary: string; nextSteps: string }): { alignment: number; non_contradiction: number; diagnosis: string } {
  const need = keyTerms(input.nextSteps);
  const have = keyTerms(input.summary);
  const missing = [...need].filter((k) => !have.has(k));
  const alignment = need.size === 0 ? 10 : Math.round((10 * (need.size - missing.length)) / need.size);
  const nums = [...need].filter((k) => /^\d/.test(k));
  const numsOk = nums.filter((k) => have.has(k)).length;
  const non_contradiction = nums.length === 0 ? 10 : Math.round((10 * numsOk) / nums.length);
  const diagnosis =
    missing.length === 0
      ? 'The summary covers every identifier the next steps use.'
      : `Missing from the summary: ${missing.slice(0, 12).join(', ')}`;
  return { alignment, non_contradiction, diagnosis };
}
