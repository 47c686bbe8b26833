/**
 * A compaction's split moves with its messages when the context changes under it (a first pin renumbers them). A split
 * at the context's very end stays right after what was its last message: messages appended since are after it.
 */
import assert from 'node:assert/strict';
import type { CompactionView } from '../../src/protocol/messages';
import { indexMove, shiftedView } from '../../src/host/contextShift';

const view = (tail: number): CompactionView => ({
  id: 'c',
  background: false,
  focus: null,
  state: 'ready',
  blocks: [
    { index: 0, firstMessage: 1, lastMessage: 2, tokens: 10, status: 'done', streamedTokens: 0, summary: 's', error: null, stats: null },
  ],
  headTokens: 10,
  tailStartIndex: tail,
  totals: null,
  checks: null,
  verdict: null,
  note: null,
  version: 'v1',
});

describe("a compaction's split, moved with its messages", () => {
  const then = ['sys', 'a', 'b', 'c'];
  // A pin's block after the frame, and two messages appended since.
  const now = ['sys', 'pin', 'a', 'b', 'c', 'd', 'e'];
  const ref = { version: 'v2', ids: () => now };

  it('a split before a message follows that message', () => {
    const v = shiftedView(view(3), then.length, ref, indexMove(then, now));
    assert.equal(v.tailStartIndex, 4);
    assert.deepEqual([v.blocks[0]!.firstMessage, v.blocks[0]!.lastMessage], [2, 3]);
  });

  it('a split at the end stays after the old last message, not at the new end', () => {
    const v = shiftedView(view(then.length), then.length, ref, indexMove(then, now));
    assert.equal(v.tailStartIndex, now.indexOf('c') + 1);
  });

  it('a split whose message is gone is not guessed', () => {
    const v = shiftedView(
      view(3),
      then.length,
      { version: 'v3', ids: () => ['sys', 'a', 'b', 'x'] },
      indexMove(then, ['sys', 'a', 'b', 'x']),
    );
    assert.equal(v.tailStartIndex, undefined);
  });
});
