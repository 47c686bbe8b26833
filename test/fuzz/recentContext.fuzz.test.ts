import assert from 'node:assert/strict';
import fc from 'fast-check';
import { recentContext } from '../../src/core/compaction/workerPrompt';

/**
 * A target-block worker's context is the most recent stretch before its block that fits the cap, starting at a
 * message that is not a tool output. It used to be found by counting the whole context and dropping from the front;
 * it is now walked from the block backwards, so that messages far from any block are never counted. Property: both
 * give the same start and size for any context, and the walk asks only for counts at or after its answer's start,
 * plus at most the one unit (a message and the tool outputs after it) that did not fit.
 */
function fromTheFront(upto: number, cap: number, tokens: readonly number[], tool: readonly boolean[]) {
  let from = 0;
  let total = 0;
  for (let i = 0; i < upto; i++) total += tokens[i]!;
  while (from < upto && total > cap) {
    let k = from + 1;
    while (k < upto && tool[k]) k++;
    for (let i = from; i < k; i++) total -= tokens[i]!;
    from = k;
  }
  return { from, tokens: total };
}

describe('fuzz: the context before a target block', () => {
  it('the backward walk picks what dropping from the front picked, and counts only near the block', () => {
    // Small counts and caps as well as large ones, so that a context that fits exactly comes up.
    const message = fc.record({ tokens: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 900 })), tool: fc.boolean() });
    const caps = fc.oneof(fc.integer({ min: -5, max: 40 }), fc.integer({ min: -50, max: 3000 }));
    fc.assert(
      fc.property(fc.array(message, { maxLength: 30 }), caps, fc.nat(), (ms, cap, at) => {
        const upto = ms.length === 0 ? 0 : at % (ms.length + 1);
        const tokens = ms.map((m) => m.tokens);
        const tool = ms.map((m) => m.tool);
        const asked: number[] = [];
        const got = recentContext(
          upto,
          cap,
          (k) => (asked.push(k), tokens[k]!),
          (k) => tool[k]!,
        );
        assert.deepEqual(got, fromTheFront(upto, cap, tokens, tool));
        // Below the answer, only the unit that overflowed: back to the first start below it.
        let unitStart = got.from - 1;
        while (unitStart > 0 && tool[unitStart]) unitStart--;
        for (const k of asked) assert.ok(k >= Math.min(got.from, Math.max(0, unitStart)), `counted message ${k}, answer ${got.from}`);
        assert.equal(new Set(asked).size, asked.length, 'a count asked twice');
      }),
      { numRuns: 3000 },
    );
  });
});
