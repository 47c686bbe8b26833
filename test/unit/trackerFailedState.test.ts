/**
 * A /compact preview whose workers all stopped, some blocks failed, waits on the user (regenerate, edit or cancel):
 * the view says so (held, with a note) instead of "running", which kept Undo and Compact here disabled and the
 * composer saying "Compacting…" for as long as the session stayed open. A background run retries its failed blocks
 * itself, so only the core's compaction-failed ends it.
 */
import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { unlimited, type ModelRequest } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { CompactionTracker } from '../../src/host/compactionTracker';
import { SessionController } from '../../src/host/sessionController';
import type { CompactionView, HostToWebview } from '../../src/protocol/messages';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';
import { BLOCK_STATS } from './helpers/blockStats';

const ID = 'c1';
const stats = BLOCK_STATS;
const totals = {
  headTokens: 300,
  summaryTokens: 60,
  inputTokens: 300,
  outputTokens: 60,
  cachedTokens: 0,
  compressionRatio: 5,
  wallMs: 10,
  requests: 3,
  maxInFlight: 3,
};
const checks = { missingPins: [], openLoopsBefore: 0, openLoopsAfter: 0, openLoopsDropped: false, grows: false };

const done = (block: number): CompactionEvent => ({ type: 'block-done', compactionId: ID, block, summary: `summary ${block}`, stats });
const failed = (block: number): CompactionEvent => ({ type: 'block-failed', compactionId: ID, block, error: 'connection refused' });
const retried = (block: number): CompactionEvent => ({ type: 'block-retried', compactionId: ID, block, attempt: 2, reason: 'regenerate' });
const edited = (block: number, summary: string): CompactionEvent => ({ type: 'block-edited', compactionId: ID, block, summary });
const ready: CompactionEvent = { type: 'ready', compactionId: ID, totals, checks };

/** A tracker showing a three-block compaction, the user's preview or a background run. */
function tracker(preview: boolean) {
  const t = new CompactionTracker({ pins: () => [], judgeEnabled: () => false, calibrated: (n) => 2 * n });
  t.start(ID, !preview, undefined, preview);
  const blk = (index: number) => ({
    index,
    firstMessage: 1 + 2 * index,
    lastMessage: 2 + 2 * index,
    tokens: 100,
    status: 'queued' as const,
    streamedTokens: 0,
    summary: undefined,
    error: undefined,
    stats: undefined,
  });
  const planned: CompactionEvent = {
    type: 'planned',
    compactionId: ID,
    blocks: [blk(0), blk(1), blk(2)],
    headTokens: 300,
    tailStartIndex: blk(2).lastMessage + 1,
    headingTokens: 0,
    layout: 'target-block',
    mode: 'parallel',
    focus: undefined,
  };
  t.onCompactionEvent(planned);
  const on = (...es: CompactionEvent[]) => {
    for (const e of es) t.onCompactionEvent(e);
    return t.current!;
  };
  return { t, on };
}

describe('tracker: a preview whose blocks failed', () => {
  it('is held for the user once every block has stopped, not before; the note says what failed and what to do', () => {
    const { t, on } = tracker(true);
    assert.equal(on(done(0), failed(1)).state, 'running', 'block 2 still runs');
    const v = on(failed(2));
    assert.equal(v.state, 'held');
    assert.equal(v.note, '2 of 3 blocks failed (connection refused). Regenerate them, edit the text, or cancel.');
    assert.equal(t.isActive, true, 'still open: it can be regenerated, edited or cancelled');
    assert.equal(t.isPreview, true);
  });

  it('the last block to stop may be one that succeeded', () => {
    const { on } = tracker(true);
    assert.equal(on(failed(1), failed(2)).state, 'running', 'block 1 still runs');
    assert.equal(on(done(0)).state, 'held');
  });

  it('a regenerate runs again; one block still failed holds it again; the last one done makes it ready', () => {
    const { on } = tracker(true);
    on(done(0), failed(1), failed(2));
    const running = on(retried(1));
    assert.deepEqual([running.state, running.note], ['running', null]);
    const again = on(done(1));
    assert.deepEqual(
      [again.state, again.note],
      ['held', '1 of 3 blocks failed (connection refused). Regenerate it, edit the text, or cancel.'],
    );
    on(retried(2), done(2));
    assert.equal(on(ready).state, 'ready');
    assert.equal(on().note, null);
  });

  it('editing the failed blocks: the note counts the rest; the last edit (the core says ready) makes it ready', () => {
    const { on } = tracker(true);
    on(done(0), failed(1), failed(2));
    assert.equal(on(edited(1, 'by hand')).note, '1 of 3 blocks failed (connection refused). Regenerate it, edit the text, or cancel.');
    const v = on(edited(2, 'by hand too'), ready);
    assert.deepEqual([v.state, v.note], ['ready', null]);
  });

  it('cancelled from the hold says it was cancelled, not what failed', () => {
    const { on } = tracker(true);
    on(failed(0), failed(1), failed(2));
    const v = on({ type: 'cancelled', compactionId: ID });
    assert.deepEqual([v.state, v.note], ['cancelled', 'Cancelled; nothing was adopted.']);
  });

  it("a background run's failures leave it running (its own retry follows) until the core says it gave up", () => {
    const { t, on } = tracker(false);
    assert.equal(on(done(0), failed(1), failed(2)).state, 'running');
    assert.equal(on(retried(1), retried(2)).state, 'running');
    t.onAgentEvent({ type: 'compaction-failed', compactionId: ID, error: 'block 1: connection refused' });
    assert.equal(t.current!.state, 'failed');
  });
});

describe('host: /compact while the compaction server is down', () => {
  let ctl: SessionController | undefined;
  afterEach(async () => {
    await ctl?.dispose();
    ctl = undefined;
  });

  it('holds the preview for the user, who regenerates the failed blocks into a ready one', async () => {
    const clock = fixedClock();
    const ids = counterIds();
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids, clock }, '/s/down.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 6; i++) {
      await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
    }
    const posted: HostToWebview[] = [];
    const compactor = new FakeModel();
    let calls = 0;
    const answer = compactor.chat.bind(compactor);
    // The first worker gets through; the server stops before the others are answered.
    compactor.chat = async (req: ModelRequest, o) => {
      if (calls++ > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:45995');
      return answer(req, o);
    };
    const settings = { ...defaultSettings(), judge: { enabled: false, threshold: 7 }, blockTokens: 256 };
    const c = new SessionController({
      store,
      ledger: new TokenLedger(new CharEstimateCounter()),
      env: { settings, contextWindow: 32_768, agent: new FakeModel(), compactor, compactorLimiter: unlimited, judge: compactor },
      ...controllerDefaults(store, { id: 'down', title: 'Down' }),
      clock,
      ids,
      post: (m) => posted.push(m),
    });
    ctl = c;
    /** What the side bar shows: the last full view posted (blocks change by deltas, states by full views). */
    const posted_ = (): CompactionView | null => {
      const last = posted.filter((m) => m.type === 'snapshot' || m.type === 'compaction').pop()!;
      return last.type === 'snapshot' ? last.snapshot.compaction : last.type === 'compaction' ? last.compaction : null;
    };
    const panel = (): CompactionView => c.snapshot().compaction!;

    await c.handle({ type: 'send', text: '/compact' });
    const held = panel();
    const n = held.blocks.filter((b) => b.status === 'failed').length;
    assert.ok(n >= 1 && held.blocks.length > n, `some blocks failed, some did not: ${held.blocks.map((b) => b.status).join(' ')}`);
    assert.equal(held.state, 'held', 'nothing runs: not "running"');
    assert.match(held.note!, /blocks failed \(connect ECONNREFUSED/);
    assert.equal(posted_()!.state, 'held', 'the side bar was told');

    await c.handle({ type: 'compaction-adopt', compactionId: held.id });
    assert.equal(store.snapshot.compactions.length, 0, 'Adopt stays refused');

    // The server is back.
    calls = -Infinity;
    for (const b of held.blocks.filter((x) => x.status === 'failed'))
      await c.handle({ type: 'block-regenerate', compactionId: held.id, block: b.index });
    const ready = panel();
    assert.deepEqual([ready.state, ready.note], ['ready', null]);
    assert.equal(posted_()!.state, 'ready');
    assert.ok(ready.blocks.every((b) => b.status === 'done'));
    await c.handle({ type: 'compaction-adopt', compactionId: held.id });
    assert.equal(store.snapshot.compactions.length, 1);
  });
});
