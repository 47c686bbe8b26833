import type { ChatMessage } from '../messages';
import { messageText } from '../messages';
import { keyMatcher } from './keys';
import type { Fact } from './types';

/**
 * Which facts a set of texts keeps: exact match on each fact's key token.
 * The texts are joined once so a fact is one search, not one per text. An
 * identifier is kept when it stands alone (no word character either side),
 * which is exactly when it is one of the texts' runs of word characters: a set
 * lookup instead of a scan of every summary per fact (a loss report checks
 * some 2,000 facts after every compaction).
 */
export function factsKeptIn(facts: readonly Fact[], texts: readonly string[]): Set<string> {
  const hay = texts.join('\n\u0000\n');
  let words: Set<string> | undefined;
  const kept = new Set<string>();
  for (const f of facts) {
    const found = f.kind === 'identifier' && WORD.test(f.key) ? (words ??= new Set(hay.match(WORDS))).has(f.key) : keyMatcher(f)(hay);
    if (found) kept.add(f.id);
  }
  return kept;
}

/** Word characters as keys.ts's identifier pattern reads them (no u flag: ASCII). */
const WORD = /^\w+$/;
const WORDS = /\w+/g;

/** Per text (e.g. per block summary): the facts it keeps. */
export function factsKeptPerText(facts: readonly Fact[], texts: readonly string[]): Set<string>[] {
  return texts.map((t) => factsKeptIn(facts, [t]));
}

/** The text of a context as the agent would send it. */
export function contextText(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => messageText(m));
}
