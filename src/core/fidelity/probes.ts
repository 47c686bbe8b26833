import type { ChatMessage } from '../messages';
import type { ModelPort } from '../ports';
import { hasKey } from './keys';
import { escapeRe } from './patterns';
import type { Fact, FactKind } from './types';

/**
 * QA probes: a short question about one fact, asked once after the full
 * context and once after the compacted one. A cloze ("fill in the blank")
 * for most kinds, the status for a test result. The answer is right when it
 * carries the fact's key (or status) exactly.
 */
export const PROBE_MARKER = 'SPLITPOINT-PROBE';
export const PROBE_BLANK = '____';

export interface Probe {
  factId: string;
  kind: FactKind;
  type: 'cloze' | 'status';
  question: string;
  /** The key (cloze) or 'passed' / 'failed' (status). */
  expect: string;
}

/** The sentence of a fact's line that carries its key, with the key blanked. */
function cloze(fact: Fact): string | undefined {
  // Cut from a longer line: the sentence around the blank may be cut too.
  if (fact.cut) return undefined;
  const re = fact.kind === 'number' ? new RegExp(escapeRe(fact.key).replace('\\ ', '\\s?')) : new RegExp(escapeRe(fact.key));
  const sentence = fact.text.split(/(?<=[.!?])\s+(?=[A-Z])/).find((s) => re.test(s));
  if (!sentence) return undefined;
  const blanked = sentence.replace(re, PROBE_BLANK).trim();
  // A blank with nothing around it asks nothing answerable.
  return blanked.replace(PROBE_BLANK, '').replace(/\W/g, '').length >= 8 ? blanked : undefined;
}

export function makeProbe(fact: Fact): Probe | undefined {
  if (fact.kind === 'pin') return undefined;
  if (fact.kind === 'test' && fact.status) {
    return {
      factId: fact.id,
      kind: fact.kind,
      type: 'status',
      expect: fact.status,
      question:
        `${PROBE_MARKER}\nAnswer from the conversation above only. Did the test below pass or fail? ` +
        `Reply with one word: passed, failed, or UNKNOWN if the conversation does not say.\n<TEST>\n${fact.key}\n</TEST>`,
    };
  }
  const c = cloze(fact);
  if (!c) return undefined;
  return {
    factId: fact.id,
    kind: fact.kind,
    type: 'cloze',
    expect: fact.key,
    question:
      `${PROBE_MARKER}\nAnswer from the conversation above only. The line below appeared in it with one part replaced by ${PROBE_BLANK}. ` +
      `Reply with the exact text it replaces and nothing else, or UNKNOWN if the conversation does not say.\n<CLOZE>\n${c}\n</CLOZE>`,
  };
}

export function probeCorrect(probe: Probe, fact: Fact, answer: string): boolean {
  if (probe.type === 'status') return new RegExp(`\\b${probe.expect}\\b`, 'i').test(answer) && !/\bUNKNOWN\b/.test(answer);
  return hasKey(fact, answer);
}

/** A deterministic sample spread over the kinds: round robin by kind, evenly through each kind's facts. */
const loose = (t: string) => t.trim().split(/\s+/).filter(Boolean).map(escapeRe).join('\\s+');

/**
 * Whether the full context answers the probe one way only. A templated line
 * ("export const ____ = z.object({") has many right answers; asking it would
 * measure the question, not the compaction.
 */
export function hasOneAnswer(fact: Fact, fullText: string): boolean {
  if (fact.kind === 'test') {
    const statuses = new Set<string>();
    for (const line of fullText.split('\n')) {
      if (!line.includes(fact.key)) continue;
      // ✗ ✖ × and ✓ ✔ √, written as escapes (test/unit/bundleCharset.test.ts says why).
      if (/[\u2717\u2716\u00D7]|\bFAIL(?:ED)?\b|\bnot ok\b/.test(line)) statuses.add('failed');
      else if (/[\u2713\u2714\u221A]|\bPASS(?:ED)?\b|\bok\b/.test(line)) statuses.add('passed');
    }
    return statuses.size === 1;
  }
  const c = cloze(fact);
  if (!c) return false;
  const at = c.indexOf(PROBE_BLANK);
  const left = c.slice(0, at);
  const right = c.slice(at + PROBE_BLANK.length);
  const re = new RegExp(
    `${left.trim() ? loose(left) + '\\s*' : ''}([^\\n]{1,160}?)${right.trim() ? '\\s*' + loose(right) + '(?![\\w%])' : '(?=\\s|$)'}`,
    'g',
  );
  const fills = new Set<string>();
  for (const m of fullText.matchAll(re)) {
    fills.add(m[1]!.trim());
    if (fills.size > 1) return false;
  }
  return fills.size === 1;
}

/**
 * A deterministic sample spread over the kinds: round robin by kind, each
 * kind's facts in the order of a hash of their id; with the full context's
 * text, only facts it answers one way.
 */
export function sampleFacts(facts: readonly Fact[], n: number, fullText?: string): Fact[] {
  const byKind = new Map<FactKind, Fact[]>();
  for (const f of facts) if (makeProbe(f)) byKind.set(f.kind, [...(byKind.get(f.kind) ?? []), f]);
  // Ordered by a hash of the fact id: evenly spaced picks would follow the session's own rhythm.
  for (const [k, list] of byKind) {
    const ordered = list.sort((a, b) => hash(a.id) - hash(b.id) || (a.id < b.id ? -1 : 1));
    const usable: Fact[] = [];
    for (const f of ordered) {
      if (usable.length >= n) break;
      if (fullText === undefined || hasOneAnswer(f, fullText)) usable.push(f);
    }
    if (usable.length > 0) byKind.set(k, usable);
    else byKind.delete(k);
  }
  const kinds = [...byKind.keys()];
  const want = new Map(kinds.map((k) => [k, 0]));
  for (let i = 0, k = 0; i < n && kinds.some((x) => want.get(x)! < byKind.get(x)!.length); k++) {
    const kind = kinds[k % kinds.length]!;
    if (want.get(kind)! < byKind.get(kind)!.length) {
      want.set(kind, want.get(kind)! + 1);
      i++;
    }
  }
  return kinds.flatMap((k) => byKind.get(k)!.slice(0, want.get(k)!));
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export interface ProbeOutcome {
  factId: string;
  kind: FactKind;
  question: string;
  expect: string;
  full: { answer: string; correct: boolean };
  compacted: { answer: string; correct: boolean };
}

export interface ProbeReport {
  asked: number;
  fullAccuracy: number;
  compactedAccuracy: number;
  /** compacted - full, in points of accuracy (negative: compaction lost answers). */
  difference: number;
  outcomes: ProbeOutcome[];
}

export async function runProbes(
  model: ModelPort,
  facts: readonly Fact[],
  full: readonly ChatMessage[],
  compacted: readonly ChatMessage[],
  opts: { model?: string; acquire?: () => Promise<() => void> } = {},
): Promise<ProbeReport> {
  const ask = async (ctx: readonly ChatMessage[], q: string): Promise<string> => {
    const release = opts.acquire ? await opts.acquire() : () => undefined;
    try {
      const r = await model.chat({
        messages: [...ctx, { role: 'user', content: q }],
        maxTokens: 64,
        temperature: 0,
        stream: false,
        ...(opts.model ? { model: opts.model } : {}),
      });
      return (r.message.content ?? '').trim();
    } finally {
      release();
    }
  };
  const outcomes = await Promise.all(
    facts.map(async (f) => {
      const p = makeProbe(f)!;
      const [a, b] = await Promise.all([ask(full, p.question), ask(compacted, p.question)]);
      return {
        factId: f.id,
        kind: f.kind,
        question: p.question,
        expect: p.expect,
        full: { answer: a, correct: probeCorrect(p, f, a) },
        compacted: { answer: b, correct: probeCorrect(p, f, b) },
      };
    }),
  );
  const acc = (k: 'full' | 'compacted') => (outcomes.length === 0 ? 0 : outcomes.filter((o) => o[k].correct).length / outcomes.length);
  return {
    asked: outcomes.length,
    fullAccuracy: acc('full'),
    compactedAccuracy: acc('compacted'),
    difference: acc('compacted') - acc('full'),
    outcomes,
  };
}
