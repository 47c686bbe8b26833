/**
 * The simulator's summariser as the eval relies on it: what survives follows
 * the budget by salience, the output is about the size asked for and never
 * over max_tokens; and the simulator's embeddings point alike texts alike.
 */
import assert from 'node:assert/strict';
import { summarize, salience } from '../sim/summarizer';
import type { CompactionRequest } from '../sim/summarizer';
import { embed } from '../sim/embeddings';
import { tiktokenTokenizer } from '../sim/tokenizer';
import { cosine } from '../../src/core/fidelity/stability';

const tok = tiktokenTokenizer();
const count = (t: string) => tok.encode(t).length;

function request(units: Array<{ role: string; text: string }>, targetTokens: number): CompactionRequest {
  return { layout: 'target-block', units, instruction: '', focus: undefined, wantCurrentWork: false, verbosity: 'detailed', targetTokens };
}

const filler = Array.from({ length: 300 }, (_, i) => `  step ${i} finished`).join('\n');

describe('fidelity: the simulator summariser', () => {
  it('ranks failures over statements over bare tokens over prose', () => {
    const ranked = [
      'QuotaDriftError: lease lost',
      'DECISION: we will use zodSchema here.',
      'see src/a/b.ts now',
      'nothing much happened',
    ].map((s) => salience(s));
    assert.deepEqual(
      [...ranked].sort((a, b) => b - a),
      ranked,
    );
    assert.equal(ranked[3], 0);
    // Error names and codes are case-sensitive: "every" is not an errno like ENOENT.
    assert.ok(salience('Please call fooBarStep after every change.', 'user') < salience('ENOENT: no such file'));
  });

  it('keeps the most salient lines first, and more of them as the budget grows', () => {
    const lines = [
      filler,
      'QuotaDriftError: lease lost in shard seven',
      'DECISION: we will use zodSchema for parsing.',
      'resolved symbol headerMapKey in module scope',
      'measured 4411 ms on the slow path',
    ];
    const units = [{ role: 'tool', text: lines.join('\n') }];
    const keeps = (budget: number) => {
      const s = summarize(request(units, budget), { count });
      return ['QuotaDriftError', 'zodSchema', 'headerMapKey', '4411 ms'].filter((k) => s.includes(k));
    };
    assert.deepEqual(keeps(48), ['QuotaDriftError']);
    assert.deepEqual(keeps(64), ['QuotaDriftError', 'zodSchema']);
    assert.deepEqual(keeps(400), ['QuotaDriftError', 'zodSchema', 'headerMapKey', '4411 ms']);
  });

  it('writes about the target (filling with prose once facts run out) and never more than max_tokens', () => {
    const units = [{ role: 'tool', text: filler }];
    for (const target of [200, 600, 1200]) {
      const n = count(summarize(request(units, target), { count }));
      assert.ok(n >= 0.85 * target && n <= target + 8, `target ${target}: ${n}`);
    }
    const capped = count(summarize(request(units, 1200), { count, maxTokens: 300 }));
    assert.ok(capped <= 300 && capped >= 250, `max_tokens 300: ${capped}`);
  });

  it('embeds alike texts alike and different texts apart, deterministically', () => {
    const a = 'the pool keeps 20 connections in src/db/pool.ts';
    assert.deepEqual(embed(a), embed(a));
    assert.ok(cosine(embed(a), embed(a)) > 0.9999);
    assert.ok(cosine(embed(a), embed('the pool keeps 20 connections in src/db/pool.ts and retries')) > 0.8);
    assert.ok(cosine(embed(a), embed('render the login page with a blue button')) < 0.3);
  });
});
