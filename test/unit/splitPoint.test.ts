import assert from 'node:assert/strict';
import {
  allowedBoundaries,
  splitManual,
  splitPreserveUserMessages,
  splitRecentTurns,
  splitTokenFraction,
  turnBudget,
  DEFAULT_SPLIT_OPTIONS,
} from '../../src/core/splitPoint';
import { asst, flatTokens, sys, toolPair, user } from './helpers/build';

const recent = (usable: number) => ({ ...DEFAULT_SPLIT_OPTIONS.recentTurns, usableContextTokens: usable });

describe('split point: preserve user messages', () => {
  it('keeps user messages newest-first within the cap and summarises every agent item', () => {
    const msgs = [sys('s'), user('u1'), asst('a1'), user('u2'), ...toolPair('read_file', 'x'), user('u3'), asst('a3')];
    // user messages at 1, 3, 6 cost 9000 each: the cap of 20000 fits the newest two
    const tokens = flatTokens(msgs, 50, { 1: 9000, 3: 9000, 6: 9000 });
    const r = splitPreserveUserMessages({ messages: msgs, tokens });
    assert.deepEqual(r.keptIndices, [3, 6]);
    assert.equal(r.tailStartIndex, 3, 'the pointer is the first kept user message');
    assert.deepEqual(r.headIndices, [1, 2, 4, 5, 7], 'the older user message and all agent items are summarised');
  });

  it('keeps every user message when they fit, and never keeps the system prompt in the head', () => {
    const msgs = [sys('s'), user('u1'), asst('a1'), user('u2'), asst('a2')];
    const r = splitPreserveUserMessages({ messages: msgs, tokens: flatTokens(msgs, 100) });
    assert.deepEqual(r.keptIndices, [1, 3]);
    assert.deepEqual(r.headIndices, [2, 4]);
  });

  it('keeps nothing when the newest user message alone exceeds the cap', () => {
    const msgs = [sys('s'), user('giant'), asst('a')];
    const r = splitPreserveUserMessages({ messages: msgs, tokens: [10, 25_000, 10] });
    assert.deepEqual(r.keptIndices, []);
    assert.equal(r.tailStartIndex, 3);
    assert.deepEqual(r.headIndices, [1, 2]);
  });
});

describe('split point: recent token fraction', () => {
  it('walks back to p × total and snaps forward to the next user message', () => {
    // 10 messages of 100 tokens: total 1000, p = 0.3 → walk back to index 7 (700..999)
    const msgs = [sys('s'), user('u1'), asst('a'), asst('b'), user('u2'), asst('c'), asst('d'), asst('e'), user('u3'), asst('f')];
    const r = splitTokenFraction({ messages: msgs, tokens: flatTokens(msgs, 100) });
    assert.equal(r.tailStartIndex, 8);
    assert.deepEqual(r.headIndices, [1, 2, 3, 4, 5, 6, 7]);
  });

  it('lands exactly on a user message when the fraction starts there', () => {
    const msgs = [sys('s'), user('u1'), asst('a'), asst('b'), asst('c'), asst('d'), asst('e'), user('u2'), asst('f'), asst('g')];
    const r = splitTokenFraction({ messages: msgs, tokens: flatTokens(msgs, 100) });
    assert.equal(r.tailStartIndex, 7);
  });

  it('without a later user message keeps the recent fraction from a boundary that does not orphan a tool result', () => {
    const msgs = [sys('s'), user('u'), ...toolPair('a', 'x'), ...toolPair('b', 'y'), ...toolPair('c', 'z'), ...toolPair('d', 'w')];
    // indices: 2 call,3 res,4 call,5 res,6 call,7 res,8 call,9 res; total 1000 → cross at 7 (a tool result)
    const r = splitTokenFraction({ messages: msgs, tokens: flatTokens(msgs, 100) });
    assert.equal(r.tailStartIndex, 6, 'moved back to the assistant call that owns the result');
    assert.equal(msgs[r.tailStartIndex]!.role, 'assistant');
  });
});

describe('split point: recent turns', () => {
  it('starts the tail at the user message opening the (M − N + 1)th turn', () => {
    const msgs = [sys('s'), user('u1'), asst('a1'), user('u2'), asst('a2'), user('u3'), asst('a3'), user('u4'), asst('a4')];
    const r = splitRecentTurns({ messages: msgs, tokens: flatTokens(msgs, 100) }, recent(100_000));
    assert.equal(r.tailStartIndex, 5, 'M = 4, N = 2 → the third turn');
    assert.deepEqual(r.headIndices, [1, 2, 3, 4]);
    assert.deepEqual(r.overBudgetTurnStarts, []);
  });

  it('after a summary with no user message since (one long agentic turn), keeps its recent part, not nothing', () => {
    const summary = { ...user('[summary of earlier work]'), kind: 'summary' as const };
    const msgs = [
      sys('s'),
      user('kept request'),
      summary,
      ...toolPair('read_file', 'a'),
      ...toolPair('read_file', 'b'),
      asst('a3'),
      asst('a4'),
    ];
    const r = splitRecentTurns({ messages: msgs, tokens: flatTokens(msgs, 100) }, recent(100_000));
    assert.ok(r.tailStartIndex > 2 && r.tailStartIndex < msgs.length, `tail from ${r.tailStartIndex}: the recent work stays`);
    assert.notEqual(msgs[r.tailStartIndex]!.role, 'tool', 'no orphaned tool result');
    assert.ok(r.headIndices.includes(2), 'the summary is folded in');
    assert.equal(r.strategy, 'recent-turns');
  });

  it('keeps everything when there are no more than N turns', () => {
    const msgs = [sys('s'), user('u1'), asst('a1'), user('u2'), asst('a2')];
    const r = splitRecentTurns({ messages: msgs, tokens: flatTokens(msgs, 100) }, recent(100_000));
    assert.equal(r.tailStartIndex, 1);
    assert.deepEqual(r.headIndices, []);
  });

  it('budgets each turn at 25% of usable context, clamped to [2K, 8K], and reports turns over it', () => {
    assert.equal(turnBudget(recent(4_000)), 2_000, 'clamped up to 2K');
    assert.equal(turnBudget(recent(20_000)), 5_000);
    assert.equal(turnBudget(recent(200_000)), 8_000, 'clamped down to 8K');
    const msgs = [sys('s'), user('u1'), asst('a1'), user('u2'), ...toolPair('read_file', 'big'), user('u3'), asst('a3')];
    const r = splitRecentTurns({ messages: msgs, tokens: flatTokens(msgs, 100, { 5: 9_000 }) }, recent(200_000));
    assert.equal(r.turnBudget, 8_000);
    assert.deepEqual(r.overBudgetTurnStarts, [3]);
    assert.equal(r.tailStartIndex, 3, 'the budget caps the turn, it does not move the pointer');
  });
});

describe('split point: manual', () => {
  const msgs = [sys('s'), user('u1'), asst('a1'), ...toolPair('t', 'o'), user('u2'), asst('a2'), user('u3')];
  it('snaps to the nearest user message, ties going to the later one', () => {
    assert.equal(splitManual(msgs, 2, 'user').tailStartIndex, 1);
    assert.equal(splitManual(msgs, 4, 'user').tailStartIndex, 5);
    assert.equal(splitManual(msgs, 6, 'user').tailStartIndex, 7, 'equidistant from 5 and 7 → 7');
  });
  it('in message mode never starts the tail on a tool result', () => {
    const r = splitManual(msgs, 4, 'message');
    assert.notEqual(msgs[r.tailStartIndex]?.role, 'tool');
    assert.deepEqual(allowedBoundaries(msgs, 'message'), [1, 2, 3, 5, 6, 7, 8]);
  });
  it('clamps out-of-range requests to the frame and the end', () => {
    assert.equal(splitManual(msgs, -5, 'user').tailStartIndex, 1);
    assert.equal(splitManual(msgs, 99, 'user').tailStartIndex, 8);
  });
});
