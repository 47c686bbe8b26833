import assert from 'node:assert/strict';
import { planSessionCompaction } from '../../src/core/agent/compactionRunner';
import { adoptPlanned, compactionBase, StaleCompactionError, viewVersion } from '../../src/core/agent/planBase';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { frameEnd, planSplit } from '../../src/core/splitPoint';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

async function session(turns: number) {
  const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
  const store = await SessionStore.create(d, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t}. ${'detail '.repeat(200)}` });
    await store.append({ role: 'assistant', content: `Fixed bug ${t}. ${'because '.repeat(200)}` });
  }
  const ledger = new TokenLedger(new CharEstimateCounter());
  const plan = () =>
    planSessionCompaction(
      { store, ledger, compactor: new FakeModel(), compactorLimiter: unlimited, clock: d.clock, ids: d.ids },
      { strategy: 'token-fraction' },
      [],
      { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: 200_000 },
      4096,
    ).pending;
  return { store, ledger, plan };
}

describe('compactions carry the snapshot they were planned on', () => {
  it('refuses to adopt a compaction planned before another one was adopted, and leaves the session as it was', async () => {
    const { store, plan } = await session(8);
    const first = plan();
    const second = plan();
    await Promise.all([first.start(), second.start()]);
    assert.ok(first.isComplete() && second.isComplete());
    await adoptPlanned(second, store);
    const before = store.snapshot.compactions.map((c) => c.id);
    await assert.rejects(adoptPlanned(first, store), (err: Error) => {
      assert.ok(err instanceof StaleCompactionError);
      assert.match(err.message, /planned on a different version of the conversation .*not adopted\. Run it again/);
      assert.match(err.message, /then: none; now: c/);
      return true;
    });
    assert.deepEqual(
      store.snapshot.compactions.map((c) => c.id),
      before,
    );
  });

  it('still adopts after new messages (the tail and next-k steps), and after an undo back to its base', async () => {
    const { store, plan } = await session(8);
    const p = plan();
    await p.start();
    await store.append({ role: 'user', content: 'one more question' });
    await adoptPlanned(p, store);
    assert.equal(store.snapshot.compactions.length, 1);

    const q = plan();
    await q.start();
    const other = plan();
    await other.start();
    await adoptPlanned(other, store);
    await store.undoCompaction();
    // Back on the compactions q was planned on: it fits again.
    await adoptPlanned(q, store);
    assert.equal(store.snapshot.compactions.length, 2);
  });

  it('the view version changes when a compaction is adopted or the pinned block appears, not when a message is added', async () => {
    const { store, ledger, plan } = await session(6);
    const version = () => {
      const messages = store.active().messages;
      return viewVersion(
        store,
        planSplit({ messages, tokens: ledger.countAll(messages) }, { strategy: 'token-fraction' }, 200_000, 4096).frameEnd,
      );
    };
    const v0 = version();
    assert.equal(v0, `none|${frameEnd(store.active().messages)}`);
    await store.append({ role: 'user', content: 'appended' });
    assert.equal(version(), v0);
    await store.updatePins(() => [{ id: 'p1', text: 'never drop the users table', kind: 'constraint', source: 'user', createdAt: 0 }]);
    const v1 = version();
    assert.notEqual(v1, v0);
    const p = plan();
    await p.start();
    await adoptPlanned(p, store);
    assert.notEqual(version(), v1);
    assert.equal(compactionBase(store), store.snapshot.compactions[0]!.id);
  });
});
