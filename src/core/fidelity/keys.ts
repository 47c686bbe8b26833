import type { Fact } from './types';
import { escapeRe } from './patterns';

/**
 * Whether a fact's key token appears in a text. Identifiers must stand alone
 * (`userId` is not kept by `userIdMap`); a number may lose the space before
 * its unit ("250ms" keeps "250 ms"); everything else is an exact substring.
 */
export type KeyMatcher = (text: string) => boolean;

const cache = new Map<string, KeyMatcher>();

export function keyMatcher(fact: Pick<Fact, 'kind' | 'key'>): KeyMatcher {
  const id = `${fact.kind}\u0000${fact.key}`;
  let m = cache.get(id);
  if (m) return m;
  m = build(fact);
  if (cache.size > 50_000) cache.clear();
  cache.set(id, m);
  return m;
}

function build(fact: Pick<Fact, 'kind' | 'key'>): KeyMatcher {
  const key = fact.key;
  if (fact.kind === 'identifier') {
    const re = new RegExp(`(?<![\\w])${escapeRe(key)}(?![\\w])`);
    return (t) => t.includes(key) && re.test(t);
  }
  if (fact.kind === 'number') {
    // "5.05%" is not kept by "15.05%", nor "v1.2.3" by "v1.2.30".
    const sp = key.indexOf(' ');
    const num = sp > 0 ? key.slice(0, sp) : key;
    const body = sp > 0 ? `${escapeRe(num)}\\s?${escapeRe(key.slice(sp + 1))}` : escapeRe(key);
    const re = new RegExp(`(?<![\\w.])${body}(?![\\w]|\\.\\d)`);
    return (t) => t.includes(num) && re.test(t);
  }
  return (t) => t.includes(key);
}

export function hasKey(fact: Pick<Fact, 'kind' | 'key'>, text: string): boolean {
  return keyMatcher(fact)(text);
}
