import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { BoundedBpeCounter, MAX_PIECE_BYTES, toBinaryString } from '../../src/core/tokens/bpeCounter';

// The reference is js-tiktoken itself, which is exact but quadratic per piece,
// so it only ever sees inputs short enough to be quick.
const exact = new Tiktoken(cl100k);
const exactCount = (t: string): number => exact.encode(t, [], []).length;
const bounded = new BoundedBpeCounter(cl100k);

const utf8Bytes = (t: string): number => new TextEncoder().encode(t).length;

describe('bounded BPE counter', () => {
  it('counts exactly what js-tiktoken counts on prose, code, JSON and mixed scripts', () => {
    const texts = [
      'hello world',
      readFileSync('README.md', 'utf8'),
      readFileSync('src/core/session/sessionStore.ts', 'utf8'),
      readFileSync('package.json', 'utf8'),
      'naïve café — 日本語のテキスト, Ελληνικά, emoji 😀👩‍👩‍👧, lone \ud800 surrogate',
      '<|endoftext|> special look-alikes <|fim_prefix|> are text',
      "it's we'll they've I'M    spaced\t\ttabs\r\n\r\nwindows lines",
    ];
    for (const t of texts) assert.equal(bounded.count(t), exactCount(t), t.slice(0, 40));
  });

  it('counts exactly on adversarial runs shorter than the cut (the heap merge equals the simple loop)', () => {
    const runs = [
      'a'.repeat(2000),
      '.'.repeat(2000),
      '-='.repeat(1000),
      'A'.repeat(1500) + 'b',
      ' '.repeat(2000) + 'x',
      Buffer.alloc(1500).toString('base64'),
    ];
    for (const t of runs) assert.equal(bounded.count(t), exactCount(t), t.slice(0, 12));
  });

  it('stays within 1 % of the exact count when a piece is longer than the cut', () => {
    // js-tiktoken would take minutes on these. One cut-sized slice is merged
    // whole by the heap merge, which the tests above hold equal to js-tiktoken;
    // periodic inputs let the exact count of four slices be extrapolated.
    for (const unit of ['a', '.', '-=', 'ab']) {
      const slice = unit.repeat(MAX_PIECE_BYTES / unit.length);
      const perSlice = bounded.count(slice);
      const long = slice.repeat(4);
      const n = bounded.count(long);
      assert.ok(n >= perSlice * 4 - 4 && n <= perSlice * 4 * 1.01 + 4, `${unit}: ${n} against about ${perSlice * 4}`);
    }
  });

  it('agrees with js-tiktoken on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (t) => bounded.count(t) === exactCount(t)),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', ' ', '\n', '.', '-', '=', '0', '7', 'é', '日', '😀', "'s"), { maxLength: 300 }),
        (parts) => {
          const t = parts.join('');
          return bounded.count(t) === exactCount(t);
        },
      ),
      { numRuns: 300 },
    );
    // long single pieces, past the simple loop's limit, through the heap merge
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'e', 'é', '日', 'ab', 'ing'), { minLength: 30, maxLength: 200 }), (parts) => {
        const t = parts.join('');
        return bounded.count(t) === exactCount(t);
      }),
      { numRuns: 200 },
    );
  });

  it('never throws; counts are whole, non-negative, at most one per byte, and zero only for empty text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), (t) => {
        const n = bounded.count(t);
        return Number.isInteger(n) && n >= 0 && n <= utf8Bytes(t) && (n === 0) === (t.length === 0);
      }),
      { numRuns: 300 },
    );
  });

  it('is roughly additive: joining two texts on a newline costs at most the parts plus the newline', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.string({ unit: 'grapheme', maxLength: 400 }), (a, b) => {
        const joined = bounded.count(`${a}\n${b}`);
        return joined <= bounded.count(a) + bounded.count(b) + 2 && joined >= Math.max(bounded.count(a), bounded.count(b)) - 2;
      }),
      { numRuns: 200 },
    );
  });

  it('encodes to UTF-8 as TextEncoder does, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (t) => {
        const want = Array.from(new TextEncoder().encode(t));
        const got = Array.from(toBinaryString(t), (c) => c.charCodeAt(0));
        return JSON.stringify(want) === JSON.stringify(got);
      }),
      { numRuns: 300 },
    );
  });
});
