import assert from 'node:assert/strict';
import fc from 'fast-check';
import { factsKeptIn } from '../../src/core/fidelity/survival';
import { keyMatcher } from '../../src/core/fidelity/keys';
import { FACT_KINDS, type Fact } from '../../src/core/fidelity/types';

/**
 * factsKeptIn decides identifiers by a set of the texts' word runs instead of
 * each identifier's own pattern, and searches other keys only when their inner
 * words are among the texts' words. Property: for any texts and any key, the
 * answer is the pattern's (the pattern is the definition of "kept").
 */
const alphabet = fc.constantFrom('a', 'b', 'B', '_', '1', '.', '/', '-', ' ', '\n', 'é', '$', '(');
const text = fc.string({ unit: alphabet, maxLength: 40 });
const key = fc.string({ unit: fc.constantFrom('a', 'b', 'B', '_', '1', '.', '-', 'é'), minLength: 1, maxLength: 5 });

describe('fuzz: which facts a summary keeps', () => {
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

  it('the inner-word prefilter never hides a key the pattern finds, whatever its kind', () => {
    const longKey = fc.string({ unit: fc.constantFrom('a', 'b', '_', '1', '.', '/', ' ', '-', ':', 'é'), minLength: 1, maxLength: 9 });
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 4 }),
        fc.array(fc.tuple(fc.constantFrom(...FACT_KINDS), longKey), { minLength: 1, maxLength: 6 }),
        (texts, keys) => {
          const facts = keys.map(([kind, k], i) => ({ id: `f${i}`, kind, key: k }) as Fact);
          const kept = factsKeptIn(facts, texts);
          const hay = texts.join('\n\u0000\n');
          for (const f of facts)
            assert.equal(kept.has(f.id), keyMatcher(f)(hay), `${f.kind} ${JSON.stringify(f.key)} in ${JSON.stringify(texts)}`);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('a number whose unit lost its space is kept, though its inner word then runs into the unit', () => {
    // "1.5 ms" has the inner word "5"; in "1.5ms" the word is "5ms". Found by the property below on a clean clone.
    const f = { id: 'f', kind: 'number', key: '1.5 ms' } as Fact;
    assert.equal(keyMatcher(f)('took 1.5ms'), true);
    assert.equal(factsKeptIn([f], ['took 1.5ms']).has('f'), true);
    assert.equal(factsKeptIn([f], ['took 1.5 s']).has('f'), false);
  });

  it('a key cut out of the text gets the answer of its pattern there too, whatever its kind', () => {
    // Random texts rarely contain a random key; this draws the key out of the text so that "kept" is the common case.
    fc.assert(
      fc.property(text, fc.nat(), fc.nat(), fc.constantFrom(...FACT_KINDS), (t, a, b, kind) => {
        const [from, to] = [a % (t.length + 1), b % (t.length + 1)].sort((x, y) => x - y) as [number, number];
        const k = t.slice(from, to);
        if (k.length === 0) return;
        const f = { id: 'f', kind, key: k } as Fact;
        assert.equal(factsKeptIn([f], [t]).has('f'), keyMatcher(f)(t), `${kind} ${JSON.stringify(k)} in ${JSON.stringify(t)}`);
      }),
      { numRuns: 3000 },
    );
  });
});
