import assert from 'node:assert/strict';
import { BackgroundCompaction } from '../../src/core/agent/compactionRunner';
import { defaultSettings } from '../../src/core/config/settings';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import { backgroundDeps, history } from './helpers/backgroundDeps';
import { FakeModel } from './helpers/fakeModel';

const settingsWith = (judge: boolean) =>
  agentSettingsFrom({ ...defaultSettings(), judge: { enabled: judge, threshold: 7 }, blockTokens: 256 }, 32_768);

describe('a background compaction cancelled after it settled', () => {
  it('an accepted summary not yet adopted (the agent adopts at its next step) is cancelled, not adopted', async () => {
    const store = await history(8);
    // No judge: accepted as soon as the summary is written.
    const bg = new BackgroundCompaction(backgroundDeps(store), settingsWith(false), [], undefined, true);
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
    const store = await history(8);
    store.recordVerdict = () => Promise.reject(new Error('ENOSPC: no space left on device'));
    const judge = new FakeModel(() => '{"alignment": 9, "non_contradiction": 9, "diagnosis": "ok"}');
    const bg = new BackgroundCompaction(
      backgroundDeps(store, { compactor: new FakeModel(), judge }),
      settingsWith(true),
      [],
      undefined,
      true,
    );
    bg.begin(true);
    bg.hurry();
    await bg.done;
    assert.equal(judge.requests.length, 1, 'the judge was asked');
    assert.deepEqual(bg.outcome, { kind: 'failed', reason: 'ENOSPC: no space left on device' });
  });
});
