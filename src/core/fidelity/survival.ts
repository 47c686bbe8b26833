import type { ChatMessage } from '../messages';
import { messageText } from '../messages';
import { TextMemo } from '../textMemo';
import { keyMatcher } from './keys';
import type { Fact } from './types';

/**
 * Which facts a set of texts keeps: exact match on each fact's key token.
 * The texts are joined once and indexed by their words (maximal runs of word
 * characters) with where each occurs; a loss report checks some 3,000 facts
 * after every compaction, and a scan of every summary per fact cost more than
 * the rest of the report.
 * - An identifier is kept when it stands alone (no word character either
 *   side), which is exactly when it is one of the words.
 * - Any other key is looked for only where its rarest inner word occurs (a run
 *   of word characters with a non-word character on both sides inside the
 *   key): wherever the key occurs, those runs occur whole. A key with no inner
 *   word, and a number (whose unit may lose its space), is searched for in full.
 */
export function factsKeptIn(facts: readonly Fact[], texts: readonly string[]): Set<string> {
  const hay = texts.join('\n\u0000\n');
  let index: Map<string, number[]> | undefined;
  const words = () => (index ??= wordIndex(hay));
  const kept = new Set<string>();
  for (const f of facts) if (isKept(f, hay, words)) kept.add(f.id);
  return kept;
}

function isKept(f: Fact, hay: string, words: () => Map<string, number[]>): boolean {
  if (f.kind === 'identifier' && WORD.test(f.key)) return words().has(f.key);
  // A number's key need not occur as it is ("250 ms" is kept by "250ms"): its own pattern decides, unfiltered.
  const inner = f.kind === 'number' ? NONE : innerWords(f.key);
  if (inner.length === 0) return keyMatcher(f)(hay);
  // Indexed loops and no destructuring: this runs for some 3,000 facts per compaction.
  let rarest: number[] | undefined;
  let at = 0;
  for (let i = 0; i < inner.length; i++) {
    const where = words().get(inner[i]!.word);
    if (!where) return false;
    if (!rarest || where.length < rarest.length) {
      rarest = where;
      at = inner[i]!.at;
    }
  }
  if (!occursAt(hay, f.key, rarest!, at)) return false;
  // An identifier also asks for boundaries around the key: its own pattern decides.
  return f.kind === 'identifier' ? keyMatcher(f)(hay) : true;
}

const NONE: readonly InnerWord[] = [];

/** Whether `key` starts `at` characters before one of `positions` in `hay`. */
function occursAt(hay: string, key: string, positions: readonly number[], at: number): boolean {
  for (let i = 0; i < positions.length; i++) if (hay.startsWith(key, positions[i]! - at)) return true;
  return false;
}

/** Word characters as keys.ts's identifier pattern reads them (no u flag: ASCII). */
const WORD = /^\w+$/;
const INNER = /(?<=\W)\w+(?=\W)/g;

/** Each word of the text with the positions it starts at, in order. */
function wordIndex(hay: string): Map<string, number[]> {
  // A scan of char codes, not matchAll(/\w+/g): that made a match object per word, most of what the index cost.
  const out = new Map<string, number[]>();
  const n = hay.length;
  for (let i = 0; i < n;) {
    if (!isWordCode(hay.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (++i < n && isWordCode(hay.charCodeAt(i)));
    const word = hay.slice(start, i);
    const at = out.get(word);
    if (at) at.push(start);
    else out.set(word, [start]);
  }
  return out;
}

/** \w without the u flag: [A-Za-z0-9_]. */
function isWordCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

interface InnerWord {
  word: string;
  /** Where in the key it starts. */
  at: number;
}

// Keys repeat across compactions of one session; the bound only keeps a long-running host from growing without end.
const memo = new TextMemo(1_000_000);
const innerMemo = memo.map<readonly InnerWord[]>();

/** The runs of word characters that have a non-word character on both sides inside the key. */
function innerWords(key: string): readonly InnerWord[] {
  return memo.get(innerMemo, key, (k) => [...k.matchAll(INNER)].map((m) => ({ word: m[0], at: m.index })));
}

/** Per text (e.g. per block summary): the facts it keeps. */
export function factsKeptPerText(facts: readonly Fact[], texts: readonly string[]): Set<string>[] {
  return texts.map((t) => factsKeptIn(facts, [t]));
}

/** The text of a context as the agent would send it. */
export function contextText(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => messageText(m));
}
