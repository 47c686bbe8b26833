import type { ChatMessage } from '../messages';
import { messageText } from '../messages';
import { keyMatcher } from './keys';
import type { Fact } from './types';

/**
 * Which facts a set of texts keeps: exact match on each fact's key token.
 * The texts are joined once so a fact is one search, not one per text.
 */
export function factsKeptIn(facts: readonly Fact[], texts: readonly string[]): Set<string> {
  const hay = texts.join('\n\u0000\n');
  const kept = new Set<string>();
  for (const f of facts) if (keyMatcher(f)(hay)) kept.add(f.id);
  return kept;
}

/** Per text (e.g. per block summary): the facts it keeps. */
export function factsKeptPerText(facts: readonly Fact[], texts: readonly string[]): Set<string>[] {
  return texts.map((t) => factsKeptIn(facts, [t]));
}

/** The text of a context as the agent would send it. */
export function contextText(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => messageText(m));
}
