/**
 * At the depth cap the summary in force is carried into the next one verbatim, and each carry adds the new
 * conversation's summary to it. A reviewer's run in a 12K window carried 15 nested layers until the summary alone
 * (3.3K tokens) left no room, and every later compaction was refused. Carried only while it takes at most half of the
 * summary's room (CARRY_ROOM_SHARE), it is otherwise summarised once more, one layer past the cap.
 */
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { CARRY_ROOM_SHARE, DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { summaryRoom } from '../../src/core/perf/volume';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();

/** Ten rounds of four turns, each round compacted with recent-turns and adopted; per round the depth, the summary's size, and whether it was carried. */
async function rounds(window: number) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  const ledger = new TokenLedger(counter);
  const ids = counterIds();
  const out: { depth: number; summary: number; carried: boolean; room: number; text: string }[] = [];
  for (let round = 0; round < 10; round++) {
    for (let t = 0; t < 4; t++) {
      await store.append({ role: 'user', content: `Turn ${round}.${t}: fix the bug in src/mod${t}.ts. TODO: add a test.` });
      await store.append({ role: 'assistant', content: `Decision: patched parseHeader. ${'y'.repeat(1500)}` });
    }
    const snap = snapshotSession(store, ledger, { strategy: 'recent-turns' }, [], { contextWindow: window, replyReserve: 1024 });
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: window, maxDepth: 2, targetFraction: 0.4 };
    const deps = { model: new FakeModel(), limiter: unlimited, count: (m: ChatMessage) => counter.countMessage(m), clock: fixedClock() };
    const pc = createCompaction(snap, settings, { ...deps, ids: { next: (p: string) => ids.next(`${p}x`) } });
    const total = snap.tokens.reduce((a, b) => a + b, 0);
    const head = snap.split.headIndices.reduce((a, i) => a + snap.tokens[i]!, 0);
    await pc.start();
    const { depth } = await pc.adopt(store);
    const summary = store.active().messages.find((m) => m.kind === 'summary')!;
    out.push({
      depth,
      summary: counter.countMessage(summary),
      text: summary.content ?? '',
      carried: pc.plan.carriedSummaryIndex !== undefined,
      room: summaryRoom({ lo: 0.4, window, keptTokens: total - head }),
    });
  }
  return out;
}

describe('compaction: the depth cap and the room a carried summary takes', () => {
  it('with room to spare the summary at the cap is carried verbatim, and the depth stays at the cap', async () => {
    const r = await rounds(200_000);
    assert.deepEqual(
      r.map((x) => x.depth),
      [1, 2, 2, 2, 2, 2, 2, 2, 2, 2],
    );
    assert.ok(r.slice(2).every((x) => x.carried));
    // The header counts context messages: it says which of them stands for many originals.
    assert.match(r[0]!.text, /^\[Splitpoint summary of earlier conversation: \d+ messages \(#\d+–#\d+\) compacted/);
    assert.match(
      r[1]!.text,
      /^\[Splitpoint summary of earlier conversation: \d+ messages \(#\d+–#\d+\), one of them an earlier summary, compacted/,
    );
  });

  it('a carried summary that outgrew half its room is summarised once more, so the summary in force stays bounded', async () => {
    const r = await rounds(8_000);
    const folded = r.findIndex((x, i) => i >= 2 && !x.carried);
    assert.ok(folded > 0, `some round past the cap summarises the earlier summary again: ${JSON.stringify(r)}`);
    assert.equal(r[folded]!.depth, 3, 'one layer past the cap, and said so');
    assert.ok(r[folded]!.summary < r[folded - 1]!.summary, 'the summary shrinks instead of growing on');
    // Every summary carried took at most its share of the room when it was carried.
    for (let i = 1; i < r.length; i++) if (r[i]!.carried) assert.ok(r[i - 1]!.summary <= r[i]!.room * CARRY_ROOM_SHARE, `round ${i}`);
  });
});
