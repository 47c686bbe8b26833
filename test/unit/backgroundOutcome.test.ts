import assert from 'node:assert/strict';
import { BackgroundCompaction } from '../../src/core/agent/compactionRunner';
import { defaultSettings } from '../../src/core/config/settings';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import { backgroundDeps, history } from './helpers/backgroundDeps';
import { FakeModel } from './helpers/fakeModel';
import type { AgentEvent } from '../../src/core/agent/events';

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

describe('a focus given to a background compaction', () => {
  it('supersedes it only while blocks are still to be written: with every block written nothing is redone, nor said to be', async () => {
    const store = await history(8);
    const superseded: string[] = [];
    const compactor = new FakeModel();
    const judge = new FakeModel(() => '{"alignment": 9, "non_contradiction": 9, "diagnosis": "ok"}');
    const deps = {
      ...backgroundDeps(store, { compactor, judge }),
      emit: (e: AgentEvent) => void (e.type === 'compaction-superseded' && superseded.push(e.focus ?? '')),
    };
    // Held for the next message: every block is written, the judge waits.
    const written = new BackgroundCompaction(deps, settingsWith(true), [], undefined, true);
    written.begin(true);
    for (let i = 0; i < 100 && !written.heldForNextMessage; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(written.heldForNextMessage);
    const requests = compactor.requests.length;
    written.refocus('keep the ports');
    assert.deepEqual(superseded, [], 'nothing redone, nothing said');
    assert.equal(compactor.requests.length, requests);
    written.cancel();
    // Still writing: its blocks are redone with the focus, and that is said.
    compactor.hold();
    const writing = new BackgroundCompaction(deps, settingsWith(true), [], undefined, true);
    writing.begin(true);
    writing.refocus('keep the ports');
    assert.deepEqual(superseded, ['keep the ports']);
    writing.cancel();
    compactor.release();
  });
});
