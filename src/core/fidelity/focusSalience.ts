import { escapeRe } from './patterns';
import type { Salience } from './salience';

/**
 * The compaction's focus in the cut of a long tool output: a line that names what the user asked to keep ranks above
 * the salience of its text alone (toolCuts.ts).
 */

/**
 * Words a focus is phrased in that name nothing in an output: English function words, question words, and the
 * verbs and nouns people ask a compaction with ("keep the details of…", "what is X set to").
 */
const FOCUS_STOP_WORDS = new Set(
  (
    'a an the and or but nor not no yes so if then than that this these those there here it its is are was were be ' +
    'been being am do does did done doing has have had having will would shall should can could may might must of ' +
    'in on at to for from by with without about above below into onto over under after before during between ' +
    'through up down out off again further once all any both each few more most other some such only own same too ' +
    'very just also as until while what which who whom whose when where why how i me my we our us you your he him ' +
    'his she her they them their keep keeping kept preserve retain remember focus focusing note notes track mention ' +
    'mentions mentioned summary summarize summarise summarizing detail details info information everything ' +
    'anything something nothing thing things stuff part parts please make sure important especially particular ' +
    'particularly regarding related relevant set value values current currently now still know need needs want ' +
    'wanted look like get got use used using let lets tell show find'
  ).split(' '),
);

/**
 * The distinctive terms of a developer's focus, which make a line that carries one keep through a cut. `key` is
 * the same for every focus with the same terms (case and order aside): it is what a kept cut is keyed by.
 */
export interface FocusTerms {
  readonly key: string;
  readonly terms: readonly string[];
  /** Every term, each in its own group, case-insensitive; a term matches as a whole word (a short suffix allowed). */
  readonly re: RegExp;
}

const FOCUS_WORD_RE = /[\p{L}\p{N}_](?:[\p{L}\p{N}_./:-]*[\p{L}\p{N}_])?/gu;
/** Letters and digits a term must not run into: alphabetic scripts' (a CJK term sits inside words unspaced). */
const WORD_EDGE = String.raw`[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{N}_]`;
const WORD_EDGE_RE = new RegExp(`^${WORD_EDGE}$`, 'u');
const focusCache = new Map<string, FocusTerms | undefined>();

/** The focus's terms: its words that are not stop words, lower case, at least two characters. Undefined if none. */
export function focusTerms(focus: string | undefined): FocusTerms | undefined {
  if (focus === undefined || focus.trim().length === 0) return undefined;
  if (focusCache.has(focus)) return focusCache.get(focus);
  const terms = new Set<string>();
  for (const w of focus.match(FOCUS_WORD_RE) ?? []) {
    const t = w.toLowerCase();
    if ([...t].length < 2 || FOCUS_STOP_WORDS.has(t)) continue;
    terms.add(t);
  }
  const sorted = [...terms].sort();
  const result = sorted.length === 0 ? undefined : { key: sorted.join('\n'), terms: sorted, re: termsPattern(sorted) };
  if (focusCache.size >= 64) focusCache.clear();
  focusCache.set(focus, result);
  return result;
}

/** One group per term; an English word matches its plural and other short endings ("tests", "failed" for "fail"). */
function termsPattern(terms: readonly string[]): RegExp {
  const alternatives = terms.map((t) => {
    const chars = [...t];
    const plain = /^[a-z]{4,}$/.test(t);
    const stem = plain && t.length >= 5 && t.endsWith('s') && !t.endsWith('ss') ? t.slice(0, -1) : t;
    const before = WORD_EDGE_RE.test(chars[0]!) ? `(?<!${WORD_EDGE})` : '';
    const after = WORD_EDGE_RE.test(chars[chars.length - 1]!) ? `(?!${WORD_EDGE})` : '';
    return `(${before}${escapeRe(stem)}${plain ? String.raw`\p{L}{0,3}` : ''}${after})`;
  });
  return new RegExp(alternatives.join('|'), 'giu');
}

/** The terms a line carries, by index into `terms.terms`. */
function termsIn(terms: FocusTerms, line: string): number[] {
  const found: number[] = [];
  const re = terms.re;
  re.lastIndex = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    for (let g = 1; g < m.length; g++) if (m[g] !== undefined && !found.includes(g - 1)) found.push(g - 1);
  }
  re.lastIndex = 0;
  return found;
}

/**
 * A term in at most this many lines of an output keeps all of them (far fewer than a cut keeps); a commoner term
 * raises each of its lines in proportion, so a focus word that is everywhere does not crowd out the errors.
 */
const FOCUS_LINES = 24;
/** Longest line searched for the focus's terms: a longer one is cut by chunks, and its chunks are searched. */
const MAX_FOCUS_LINE = 16_000;
/** What a line with a distinctive focus term gains: above any error (5 and a half at most). */
const FOCUS_WEIGHT = 6;

/**
 * `salience` for the lines of `text` (one tool output), raised for a line that carries a term of the focus: by
 * FOCUS_WEIGHT for a term in at most FOCUS_LINES lines of the text, less for a commoner one.
 */
export function focusSalience(terms: FocusTerms, text: string, salience: Salience): Salience {
  const f = new FocusScore(terms, text, salience);
  return f.score.bind(f);
}

class FocusScore {
  /** Lines of the text each term is in, counted when first asked. */
  private lines: number[] | undefined;

  constructor(
    private readonly terms: FocusTerms,
    private readonly text: string,
    private readonly salience: Salience,
  ) {}

  score(line: string): number {
    const s = this.salience(line);
    if (line.length > MAX_FOCUS_LINE) return s;
    const found = termsIn(this.terms, line);
    if (found.length === 0) return s;
    this.lines ??= this.countLines();
    let gain = 0;
    for (const k of found) gain = Math.max(gain, Math.min(1, FOCUS_LINES / Math.max(1, this.lines[k]!)));
    return s + FOCUS_WEIGHT * gain;
  }

  private countLines(): number[] {
    const counts = new Array<number>(this.terms.terms.length).fill(0);
    for (const line of this.text.split('\n')) {
      if (line.length <= MAX_FOCUS_LINE) for (const k of termsIn(this.terms, line)) counts[k]!++;
    }
    return counts;
  }
}
