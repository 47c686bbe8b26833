/**
 * How often a compaction's streamed workers are read (src/core/compaction/workerPace.ts): the policy, and that a
 * running compaction hands each worker's request an interval that follows how many workers run and whether anyone
 * watches, asked afresh before every batch (the transport's side: test/integration/transportPaced.test.ts).
 */
import assert from 'node:assert/strict';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { MAX_PACE_MS, MIN_PACE_MS, READS_PER_SECOND, workerPaceMs } from '../../src/core/compaction/workerPace';
import type { ChatMessage } from '../../src/core/messages';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);

describe('worker stream pace', () => {
  it('budgets reads over all streams: at most 16 a second while watched (250 ms – 2 s each), 8 while not (250 ms – 4 s)', () => {
    assert.equal(workerPaceMs(1, true), 250);
    assert.equal(workerPaceMs(4, true), 250, 'four streams at four reads a second: 16 a second');
    assert.equal(workerPaceMs(5, true), 500, 'five would read 20 times a second at 250 ms: the next rung');
    assert.equal(workerPaceMs(8, true), 500);
    assert.equal(workerPaceMs(16, true), 1000);
    assert.equal(workerPaceMs(17, true), 2000);
    assert.equal(workerPaceMs(27, true), 2000);
    assert.equal(workerPaceMs(256, true), 2000, 'at least one read every 2 s per stream, however many run');
    assert.equal(workerPaceMs(0, true), 250);
    assert.equal(workerPaceMs(1, false), 250, 'the last worker is seen ending as soon as when watched');
    assert.equal(workerPaceMs(2, false), 250);
    assert.equal(workerPaceMs(8, false), 1000);
    assert.equal(workerPaceMs(27, false), 4000);
    assert.equal(workerPaceMs(64, false), 4000);
    for (const watched of [true, false]) {
      const key = watched ? 'watched' : 'unwatched';
      let last = 0;
      for (let n = 1; n <= 300; n++) {
        const ms = workerPaceMs(n, watched);
        assert.ok(ms >= last && ms >= MIN_PACE_MS && ms <= MAX_PACE_MS[key], `${n} streams: ${ms} ms`);
        assert.ok(ms >= workerPaceMs(n, true), 'never read more often unwatched than watched');
        // Doublings of the floor, so that streams share clock ticks (src/llm/pacingClock.ts).
        assert.ok(Number.isInteger(Math.log2(ms / MIN_PACE_MS)), `${n} streams: ${ms} ms is not a doubling of ${MIN_PACE_MS}`);
        // Below the ceiling, reads a second over all streams stay within the budget.
        if (ms < MAX_PACE_MS[key])
          assert.ok((n * 1000) / ms <= READS_PER_SECOND[key], `${n} streams read ${(n * 1000) / ms} times a second`);
        last = ms;
      }
    }
  });

  it("a running compaction's worker requests carry an interval that follows the workers in flight and the watcher", async () => {
    const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
    const store = await SessionStore.create(d, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 40; t++) {
      await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts. ${'Details. '.repeat(120)}` });
      await store.append({ role: 'assistant', content: `Decision: patched parseHeader in src/mod${t}.ts (${t}).` });
    }
    const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, [], {
      contextWindow: 200_000,
      replyReserve: 4096,
    });
    let watched = true;
    const model = new FakeModel();
    model.hold();
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: 200_000, mode: 'parallel' as const };
    const pc = createCompaction(snap, settings, {
      model,
      limiter: unlimited,
      count,
      clock: fixedClock(),
      ids: counterIds(),
      watched: () => watched,
    });
    const done = pc.start();
    await new Promise((r) => setImmediate(r));
    const n = model.requests.length;
    assert.ok(n >= 9, `only ${n} workers`);
    assert.equal(model.inFlight, n, 'every worker in flight together');
    const paces = model.requests.map((r) => r.deltaBatchMs);
    for (const p of paces) assert.equal(typeof p, 'function', 'each streamed worker gets an interval asked before each batch');
    const ask = (i: number) => (paces[i] as () => number)();
    assert.equal(ask(0), workerPaceMs(n, true));
    assert.ok(ask(0) > MIN_PACE_MS, `${n} workers: ${ask(0)} ms`);
    watched = false;
    assert.equal(ask(n - 1), workerPaceMs(n, false), 'the side bar hidden: every running stream slows down');
    assert.ok(ask(n - 1) > workerPaceMs(n, true));
    watched = true;
    assert.equal(ask(n - 1), workerPaceMs(n, true));
    model.release();
    await done;
    assert.equal(ask(0), MIN_PACE_MS, 'with no other worker left, the interval is the floor');
  });

  it('unstreamed workers get no interval', async () => {
    const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
    const store = await SessionStore.create(d, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 12; t++) {
      await store.append({ role: 'user', content: `Turn ${t}: ${'Details. '.repeat(120)}` });
      await store.append({ role: 'assistant', content: `Done ${t}.` });
    }
    const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, [], {
      contextWindow: 200_000,
      replyReserve: 4096,
    });
    const model = new FakeModel();
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: 200_000, streamWorkers: false };
    await createCompaction(snap, settings, { model, limiter: unlimited, count, clock: fixedClock(), ids: counterIds() }).start();
    assert.ok(model.requests.length >= 2);
    for (const r of model.requests) assert.equal(r.deltaBatchMs, undefined);
  });
});
