/**
 * A block's summary size as the side bar's chips and tooltip and the review editor all state it: the worker's own
 * count when the text is the worker's, an estimate said to be one otherwise.
 */
import assert from 'node:assert/strict';
import { summaryTokens, type BlockView } from '../../src/protocol/messages';

const stats = { inputTokens: 4000, outputTokens: 310, summaryTokens: null, cachedTokens: null, ms: 900 };
const b = (patch: Partial<BlockView>): Pick<BlockView, 'status' | 'summary' | 'stats'> => ({
  status: 'queued',
  summary: null,
  stats: null,
  ...patch,
});

describe("a block's summary tokens", () => {
  it("the worker's count for its own text; ≈ chars/4, marked as an estimate, for a text the user wrote", () => {
    assert.deepEqual(summaryTokens(b({ status: 'done', summary: 'x'.repeat(2000), stats })), { n: 310, estimate: false });
    // An edited block keeps the worker's stats, which no longer describe the text.
    assert.deepEqual(summaryTokens(b({ status: 'edited', summary: 'x'.repeat(41), stats })), { n: 11, estimate: true });
    // A reasoning model's worker decoded its thinking too: the summary's own count is what it holds.
    const thought = { ...stats, outputTokens: 1200, summaryTokens: 310 };
    assert.deepEqual(summaryTokens(b({ status: 'done', summary: 'x'.repeat(2000), stats: thought })), { n: 310, estimate: false });
    // Any text without the worker's count for it is estimated too.
    assert.deepEqual(summaryTokens(b({ status: 'failed', summary: 'x'.repeat(8) })), { n: 2, estimate: true });
  });

  it('none while a block has no text', () => {
    assert.equal(summaryTokens(b({ status: 'streaming' })), null);
    assert.equal(summaryTokens(b({ status: 'queued' })), null);
  });
});
