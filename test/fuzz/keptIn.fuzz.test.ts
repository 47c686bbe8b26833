import assert from 'node:assert/strict';
import fc from 'fast-check';
import { factsKeptIn } from '../../src/core/fidelity/survival';
import { keyMatcher } from '../../src/core/fidelity/keys';
import type { Fact } from '../../src/core/fidelity/types';

/**
 * factsKeptIn decides identifiers by a set of the texts' word runs instead of
 * each identifier's own pattern. Property: for any texts and any key, the
 * answer is the pattern's (the pattern is the definition of "kept").
 */
const alphabet = fc.constantFrom('a', 'b', 'B', '_', '1', '.', '/', '-', ' ', '\n', 'é', '$', '(');
const text = fc.string({ unit: alphabet, maxLength: 40 });
const key = fc.string({ unit: fc.constantFrom('a', 'b', 'B', '_', '1', '.', '-', 'é'), minLength: 1, maxLength: 5 });

describe('fuzz: which identifiers a summary keeps', () => {
  it('the word-set lookup answers as the identifier pattern does, whatever the texts and the key', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 4 }), fc.array(key, { minLength: 1, maxLength: 6 }), (texts, keys) => {
        const facts = keys.map((k, i) => ({ id: `f${i}`, kind: 'identifier', key: k }) as Fact);
        const kept = factsKeptIn(facts, texts);
        const hay = texts.join('\n\u0000\n');
        for (const f of facts) assert.equal(kept.has(f.id), keyMatcher(f)(hay), `${JSON.stringify(f.key)} in ${JSON.stringify(texts)}`);
      }),
      { numRuns: 2000 },
    );
  });
});
