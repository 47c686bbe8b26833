/**
 * The "Head → summary" and "Ratio" meters count a compaction only while it may still be adopted. A review found
 * "15.6K → 384" and "12.9×" from a cancelled compaction, still shown after Dismiss (which only hides the panel).
 */
import assert from 'node:assert/strict';
import { formatTokens, type CompactionView } from '../../src/protocol/messages';
import { buildPrefix, project } from '../../webview/projection';
import { expandOverview, openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

describe('webview: gauges after a compaction closes', function () {
  let view: View;
  const snap = makeSnapshot(80);
  const c = makeCompaction(snap, 3);
  const p = project(buildPrefix(snap.messages, snap.split), snap.gauge, snap.split, snap.split.tailStartIndex);
  const totals = { summaryTokens: 1_209, compressionRatio: 12.9, inputTokens: 9000, outputTokens: 1_209, cachedTokens: 0, wallMs: 900 };
  const done: CompactionView = {
    ...c,
    state: 'ready',
    blocks: c.blocks.map((b) => ({ ...b, status: 'done', summary: `summary ${b.index}` })),
    headTokens: 15_600,
    totals,
  };
  const estimate = `head ${formatTokens(p.headTokens)} tokens, summary ${formatTokens(p.summaryTokens)} tokens (estimate)`;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  /** Where the timeline draws `block`: it lays messages out by their tokens. */
  const blockX = async (block: { firstMessage: number; lastMessage: number }) => {
    const box = (await view.page.locator('.tl-canvas').boundingBox())!;
    const at = (i: number) => snap.messages.slice(0, i).reduce((a, m) => a + m.tokens, 0);
    const mid = (at(block.firstMessage) + at(block.lastMessage + 1)) / 2;
    return { x: box.x + (mid / at(snap.messages.length)) * box.width, y: box.y + 30 };
  };
  const io = async () => (await view.page.getByRole('meter', { name: 'Head → summary tokens' }).getAttribute('aria-valuetext'))!;
  const ioShown = async () => (await view.page.locator('.m-io .meter-value').textContent())!;
  const ratio = async () => (await view.page.getByRole('meter', { name: 'Compression ratio' }).getAttribute('aria-valuetext'))!;

  it('while the compaction is ready, the meters count it', async () => {
    assert.ok(p.summaryTokens > 0 && p.summaryTokens !== 1_209, 'fixture: the estimate differs from the run');
    await view.send({ type: 'compaction', compaction: done });
    assert.equal(await io(), 'head 15.6K tokens, summary 1,209 tokens');
    assert.equal(await ratio(), '12.9 to 1, head over summary');
    const at = await blockX(done.blocks[0]!);
    await view.page.mouse.move(at.x, at.y);
    assert.match((await view.page.locator('#tl-tip').textContent()) ?? '', /^Block 1 · done/, 'an open block is under the pointer');
  });

  for (const state of ['cancelled', 'failed', 'adopted'] as const)
    it(`once ${state}, and after Dismiss, they show the projection's estimate, said to be one`, async () => {
      // A compaction of its own: Dismiss hides the panel for that id.
      const mine = { ...done, id: `cmp-${state}` };
      await view.send({ type: 'compaction', compaction: mine });
      assert.equal(await io(), 'head 15.6K tokens, summary 1,209 tokens');
      await view.send({ type: 'compaction', compaction: { ...mine, state } });
      assert.equal(await io(), estimate);
      assert.equal(await ioShown(), `${formatTokens(p.headTokens)} → ${formatTokens(p.summaryTokens)} est.`);
      assert.equal(await ratio(), `${p.ratio.toFixed(1)} to 1, head over summary (estimate)`);
      // Its block preview offers no edit or regeneration.
      await view.page.locator('.cp-chip[data-block="0"]').click();
      assert.equal(await view.page.locator('.cp-preview .pv-regen').getAttribute('disabled'), '', 'Regenerate');
      assert.equal(await view.page.locator('.cp-preview .pv-edit-btn').getAttribute('disabled'), '', 'Edit');
      // The timeline's block band: a closed compaction's blocks are neither drawn nor there to hover.
      const tip = view.page.locator('#tl-tip');
      const at = await blockX(mine.blocks[0]!);
      await view.page.mouse.move(at.x, at.y);
      assert.doesNotMatch((await tip.textContent()) ?? '', /^Block \d/, 'no block under the pointer');
      await view.page.locator('.cp-dismiss').click();
      await view.frame();
      assert.equal(await view.page.locator('.compaction').isVisible(), false);
      assert.equal(await io(), estimate);
      assert.match((await view.page.locator('.m-ratio .meter-value').textContent())!, /^[\d.]+× est\.$/);
    });
});
