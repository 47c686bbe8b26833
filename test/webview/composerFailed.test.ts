/**
 * /compact, then the compaction server stops: the host's tracker turns the preview's block events into what the side
 * bar shows. Once nothing runs, the composer's "Compacting…" goes, Compact here and Undo work again, Adopt stays off,
 * and Cancel and Regenerate reach the host; a regenerate that succeeds brings it to ready.
 */
import assert from 'node:assert/strict';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { CompactionTracker } from '../../src/host/compactionTracker';
import type { HostToWebview } from '../../src/protocol/messages';
import { openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';
import { BLOCK_STATS } from '../unit/helpers/blockStats';

describe('webview: a /compact whose blocks failed', function () {
  let view: View;
  const snap = { ...makeSnapshot(40), compactionDepth: 1 };
  const shape = makeCompaction(snap, 3);
  const ID = shape.id;
  const tracker = new CompactionTracker({ pins: () => [], judgeEnabled: () => false });
  const stats = BLOCK_STATS;
  const deliver = async (msgs: HostToWebview[]) => {
    for (const m of msgs) await view.send(m);
  };
  const on = (e: CompactionEvent) => deliver(tracker.onCompactionEvent(e));
  const hint = async () => ((await view.page.locator('.composer-hint').textContent()) ?? '').trim();
  const disabled = async (sel: string) => (await view.page.locator(sel).getAttribute('disabled')) !== null;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
  });
  after(async () => view?.close());

  it('says "Compacting…" while the workers run; once every block stopped, some failed, the panel leaves "running"', async () => {
    const input = view.page.getByRole('combobox', { name: 'Message to the agent' });
    await input.fill('/compact');
    await input.press('Enter');
    await deliver(tracker.start(ID, false, undefined, true));
    const blocks = shape.blocks.map((b) => ({ ...b, summary: undefined, error: undefined, stats: undefined }));
    await on({
      type: 'planned',
      compactionId: ID,
      blocks,
      headTokens: shape.headTokens,
      tailStartIndex: blocks[blocks.length - 1]!.lastMessage + 1,
      headingTokens: 0,
      layout: 'target-block',
      mode: 'parallel',
      focus: undefined,
    });
    await on({ type: 'block-done', compactionId: ID, block: 0, summary: 'DECISIONS:\n- keep the users table', stats });
    await on({ type: 'block-failed', compactionId: ID, block: 1, error: 'connection refused' });
    assert.equal(await hint(), 'Compacting…', 'block 3 still runs');
    assert.equal(await disabled('.tl-compact'), true);
    assert.equal(await disabled('.undo-btn'), true);

    await on({ type: 'block-failed', compactionId: ID, block: 2, error: 'connection refused' });
    assert.equal(await hint(), '', 'nothing runs: no "Compacting…"');
    assert.notEqual(await view.page.locator('.cp-state').textContent(), 'running');
    assert.match((await view.page.locator('.compaction').textContent()) ?? '', /2 of 3 blocks failed \(connection refused\)/);
    assert.equal(await disabled('.tl-compact'), false, 'Compact here works again');
    assert.equal(await disabled('.undo-btn'), false, 'Undo works again');
    assert.equal(await disabled('.cp-adopt'), true, 'Adopt stays off: not every block has a summary');
  });

  it('Cancel and Regenerate reach the host; the failed blocks regenerated, it is ready to adopt', async () => {
    assert.equal(await view.page.locator('.cp-cancel').isVisible(), true);
    await view.clearPosted();
    await view.page.locator('.cp-chip[data-block="1"]').click();
    await view.page.locator('.pv-regen').click();
    await view.page.locator('.cp-cancel').click();
    const posted = await view.posted();
    assert.ok(posted.some((m) => m.type === 'block-regenerate' && m.block === 1));
    assert.ok(posted.some((m) => m.type === 'compaction-cancel' && m.compactionId === ID));

    for (const block of [1, 2]) {
      await on({ type: 'block-retried', compactionId: ID, block, attempt: 2, reason: 'regenerate' });
      await on({ type: 'block-done', compactionId: ID, block, summary: `FACTS:\n- block ${block}`, stats });
    }
    const totals = {
      headTokens: shape.headTokens,
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
    await on({ type: 'ready', compactionId: ID, totals, checks });
    assert.equal(await view.page.locator('.cp-state').textContent(), 'ready');
    assert.equal(await disabled('.cp-adopt'), false);
  });
});
