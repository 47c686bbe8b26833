import assert from 'node:assert/strict';
import { BackgroundCompaction } from '../../src/core/agent/compactionRunner';
import { defaultSettings } from '../../src/core/config/settings';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

describe('a background compaction cancelled after it settled', () => {
  it('an accepted summary not yet adopted (the agent adopts at its next step) is cancelled, not adopted', async () => {
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/w.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 8; i++) {
      await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
    }
    // No judge: accepted as soon as the summary is written.
    const settings = agentSettingsFrom({ ...defaultSettings(), judge: { enabled: false, threshold: 7 }, blockTokens: 256 }, 32_768);
    const compactor = new FakeModel();
    const deps = {
      store,
      ledger: new TokenLedger(new CharEstimateCounter()),
      compactor,
      compactorLimiter: unlimited,
      judge: compactor,
      clock: fixedClock(),
      ids: counterIds(),
      emit: () => undefined,
    };
    const bg = new BackgroundCompaction(deps, settings, [], undefined);
    bg.begin(true);
    await bg.done;
    assert.equal(bg.outcome?.kind, 'accepted');
    // The panel still offers Cancel in this state; the agent loop would adopt the outcome at its next step.
    bg.cancel();
    assert.equal(bg.outcome?.kind, 'cancelled', 'the outcome the loop applies is now the cancel');
    assert.equal(bg.pending.isCancelled, true);
    assert.equal(store.snapshot.compactions.length, 0);
  });
});

describe('a background compaction whose verdict the log cannot keep', () => {
  it('fails with the storage error instead of ending as a silent cancel', async () => {
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/w.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 8; i++) {
      await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
    }
    store.recordVerdict = () => Promise.reject(new Error('ENOSPC: no space left on device'));
    const settings = agentSettingsFrom({ ...defaultSettings(), judge: { enabled: true, threshold: 7 }, blockTokens: 256 }, 32_768);
    const judge = new FakeModel(() => '{"alignment": 9, "non_contradiction": 9, "diagnosis": "ok"}');
    const deps = {
      store,
      ledger: new TokenLedger(new CharEstimateCounter()),
      compactor: new FakeModel(),
      compactorLimiter: unlimited,
      judge,
      clock: fixedClock(),
      ids: counterIds(),
      emit: () => undefined,
    };
    const bg = new BackgroundCompaction(deps, settings, [], undefined);
    bg.begin(true);
    bg.hurry();
    await bg.done;
    assert.equal(judge.requests.length, 1, 'the judge was asked');
    assert.deepEqual(bg.outcome, { kind: 'failed', reason: 'ENOSPC: no space left on device' });
  });
});
