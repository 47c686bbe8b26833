import assert from 'node:assert/strict';
import { AgentWait } from '../../src/host/agentWait';
import type { AgentWaitView } from '../../src/protocol/messages';
import { fixedClock } from './helpers/memoryStorage';

function setup() {
  const clock = fixedClock();
  const posted: (AgentWaitView | null)[] = [];
  const state = { inTurn: true, streaming: false };
  const w = new AgentWait({
    now: () => clock.now(),
    post: (x) => posted.push(x),
    inTurn: () => state.inTurn,
    replyStreaming: () => state.streaming,
  });
  return { w, clock, posted, state };
}

describe('AgentWait: what the running agent waits on', () => {
  it('posts each change once, with how long it had waited; a snapshot mid-wait gives the time so far', () => {
    const { w, clock, posted } = setup();
    w.update('model');
    w.update('model');
    clock.advance(4_000);
    assert.deepEqual(w.view(), { on: 'model', detail: null, elapsedMs: 4_000 });
    w.update('tool', 'read_file');
    w.update(null, 'read_file');
    w.update(null);
    assert.deepEqual(posted, [{ on: 'model', detail: null, elapsedMs: 0 }, { on: 'tool', detail: 'read_file', elapsedMs: 0 }, null]);
  });

  it('ignores events outside a turn; the end of the compaction the turn stopped for, and only that, goes back to the model', () => {
    const { w, posted, state } = setup();
    state.inTurn = false;
    w.compacting('c1');
    assert.equal(posted.length, 0, "a compaction's events while the agent is idle");
    state.inTurn = true;
    w.compacting('c1');
    w.compactionEnded('c0');
    assert.equal(w.view()?.on, 'compaction', 'another compaction (an earlier fallback) ended');
    w.compactionEnded('c1');
    assert.deepEqual(
      posted.map((x) => (x ? `${x.on} ${x.detail}` : null)),
      ['compaction now', 'model null'],
    );
    w.update('compaction', 'background');
    w.compactionEnded('c1');
    assert.equal(w.view()?.detail, 'background', 'a background wait ends at the next step, not at an id it does not know');
    w.update('tool', 'run_command');
    w.compactionEnded('c1');
    assert.equal(w.view()?.on, 'tool', 'a compaction ending while a tool runs changes nothing');
    w.update(null);
    state.streaming = true;
    w.update('reasoning');
    assert.equal(w.view(), null, 'reasoning after reply text: the text shows');
    state.streaming = false;
    w.update('model');
    const before = posted.length;
    w.endSilently();
    assert.equal(w.view(), null);
    assert.equal(posted.length, before, 'ended by the reply text or the turn: the view ends it itself');
  });

  it("the judge's check of a held summary, then its rewrite, are said for that summary only, until its end", () => {
    const { w, posted } = setup();
    w.compacting('c1', 'verdict');
    w.amending('c0', 'c9');
    assert.equal(w.view()?.detail, 'verdict', "another compaction's rewrite (one running in the background)");
    w.compactionEnded('c0');
    assert.equal(w.view()?.detail, 'verdict', 'another compaction ended while the judge checks this one');
    w.amending('c1', 'c2');
    w.compactionEnded('c1');
    w.compactionEnded('c9');
    assert.equal(w.view()?.detail, 'amending', 'the rejected summary, or another compaction, ended: the rewrite still runs');
    // The rewrite is a compaction of its own: its end (adopted, held or failed) ends the wait.
    w.compactionEnded('c2');
    assert.deepEqual(
      posted.map((x) => (x ? `${x.on} ${x.detail}` : null)),
      ['compaction verdict', 'compaction amending', 'model null'],
    );
    w.update('tool', 'read_file');
    w.amending('c1', 'c3');
    assert.equal(w.view()?.on, 'tool', 'a rewrite while the turn waits on something else changes nothing');
  });
});
