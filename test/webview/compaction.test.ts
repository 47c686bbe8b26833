import assert from 'node:assert/strict';
import type { BlockView } from '../../src/protocol/messages';
import { openView, screenshot, type View, expandOverview } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

describe('webview: block overlay during a compaction', function () {
  let view: View;
  const snap = makeSnapshot(120);
  const c = makeCompaction(snap, 4);
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  const chip = (i: number) => view.page.locator(`.cp-chip[data-block="${i}"]`);
  const block = (i: number, patch: Partial<BlockView>): BlockView => ({ ...c.blocks[i]!, ...patch });

  it('shows the partition with every block queued, Adopt disabled', async () => {
    await view.send({ type: 'compaction', compaction: c });
    assert.equal(await view.page.locator('.compaction').isVisible(), true);
    assert.equal(await view.page.locator('.cp-chip').count(), 4);
    for (let i = 0; i < 4; i++) assert.match((await chip(i).getAttribute('class')) ?? '', /st-queued/);
    assert.equal(await view.page.locator('.cp-adopt').getAttribute('disabled'), '');
  });

  it('block deltas update statuses: sent, writing with tokens so far, done, failed, edited', async () => {
    // Sent, nothing read yet: not called writing, and no count so far.
    await view.send({ type: 'block', compactionId: c.id, block: block(0, { status: 'streaming', streamedTokens: 0 }) });
    const sent = (await chip(0).getAttribute('aria-label')) ?? '';
    assert.match(sent, /^#1 sent /);
    assert.doesNotMatch(sent, /tokens so far|in the summary/, 'nothing read yet is not a count so far');
    assert.doesNotMatch((await chip(0).textContent()) ?? '', /→/, 'no summary size yet');
    await view.send({ type: 'block', compactionId: c.id, block: block(0, { status: 'streaming', streamedTokens: 57 }) });
    assert.match((await chip(0).getAttribute('class')) ?? '', /st-streaming/);
    assert.match((await chip(0).getAttribute('aria-label')) ?? '', /^#1 writing… .*: block 1, .*57 tokens so far/);
    const stats = { inputTokens: c.blocks[0]!.tokens, outputTokens: 280, summaryTokens: null, cachedTokens: 1000, ms: 900 };
    await view.send({
      type: 'block',
      compactionId: c.id,
      block: block(0, { status: 'done', summary: '## DECISIONS\n- keep **users**', stats }),
    });
    await view.send({ type: 'block', compactionId: c.id, block: block(1, { status: 'failed', error: 'HTTP 500 from server' }) });
    await view.send({ type: 'block', compactionId: c.id, block: block(2, { status: 'edited', summary: 'hand-edited', stats }) });
    assert.match((await chip(0).getAttribute('class')) ?? '', /st-done/);
    assert.match((await chip(1).getAttribute('class')) ?? '', /st-failed/);
    assert.match((await chip(2).getAttribute('class')) ?? '', /st-edited/);
    assert.match((await view.page.locator('.cp-meta').textContent()) ?? '', /2\/4 blocks ready.*1 failed/);
    // Deltas for another compaction are ignored.
    await view.send({ type: 'block', compactionId: 'other', block: block(3, { status: 'done' }) });
    await view.send({ type: 'block-progress', compactionId: 'other', progress: [{ index: 3, streamedTokens: 9 }] });
    assert.match((await chip(3).getAttribute('class')) ?? '', /st-queued/);
    await screenshot(view, 'compaction-running');
  });

  it('click a block to preview; edit posts block-edit, regenerate posts block-regenerate', async () => {
    await chip(0).click();
    assert.match((await view.page.locator('.cp-preview .pv-body').innerHTML()) ?? '', /<strong>users<\/strong>/);
    assert.ok(await view.page.getByRole('meter', { name: 'Block 1: summary tokens of block tokens' }).count());
    await view.clearPosted();
    await view.page.locator('.pv-edit-btn').click();
    const ta = view.page.locator('textarea.pv-edit');
    await ta.fill('## DECISIONS\n- keep users (edited)');
    await view.page.locator('.pv-save').click();
    await chip(1).click();
    assert.match((await view.page.locator('.cp-preview').textContent()) ?? '', /HTTP 500/);
    await view.page.locator('.pv-regen').click();
    assert.deepEqual(await view.posted(), [
      { type: 'block-edit', compactionId: c.id, block: 0, text: '## DECISIONS\n- keep users (edited)' },
      { type: 'block-regenerate', compactionId: c.id, block: 1 },
    ]);
  });

  it('blocks are keyboard operable (arrow keys move the selection)', async () => {
    await chip(1).focus();
    await view.page.keyboard.press('ArrowRight');
    assert.equal(await chip(2).getAttribute('aria-selected'), 'true');
  });

  it('Adopt is enabled once every block has a summary; Adopt and Cancel post', async () => {
    const stats = { inputTokens: 1000, outputTokens: 100, summaryTokens: null, cachedTokens: null, ms: 5 };
    await view.send({ type: 'block', compactionId: c.id, block: block(1, { status: 'done', summary: 'b1', stats }) });
    await view.send({ type: 'block', compactionId: c.id, block: block(3, { status: 'done', summary: 'b3', stats }) });
    const ready = {
      ...c,
      state: 'ready' as const,
      blocks: [0, 1, 2, 3].map((i) => block(i, { status: 'done', summary: `s${i}`, stats })),
      totals: { summaryTokens: 400, compressionRatio: 10, inputTokens: 4000, outputTokens: 400, cachedTokens: 3000, wallMs: 1200 },
      checks: { missingPins: [], openLoopsBefore: 3, openLoopsAfter: 3, openLoopsDropped: false },
      verdict: { alignment: 6, nonContradiction: 9, overall: 6, accepted: false, diagnosis: 'Misses the rollback step.', attempt: 1 },
    };
    await view.send({ type: 'compaction', compaction: { ...ready, state: 'judging' } });
    assert.equal(await view.page.locator('.cp-adopt').getAttribute('disabled'), '', 'not while the judge decides');
    await view.send({ type: 'compaction', compaction: ready });
    assert.equal(await view.page.locator('.cp-adopt').getAttribute('disabled'), null);
    assert.match((await view.page.locator('.compaction .verdict').textContent()) ?? '', /6\/10.*rejected.*rollback/);
    // The ratio of the head and summary the view shows (the review editor's too), not a figure of its own.
    const shownRatio = Math.round((ready.headTokens / 400) * 100) / 100;
    assert.equal(await view.page.getByRole('meter', { name: 'Compression ratio' }).getAttribute('aria-valuenow'), String(shownRatio));
    await view.clearPosted();
    await view.page.locator('.cp-adopt').click();
    await view.page.locator('.cp-cancel').click();
    assert.deepEqual(await view.posted(), [
      { type: 'compaction-adopt', compactionId: c.id },
      { type: 'compaction-cancel', compactionId: c.id },
    ]);
  });

  it('after adoption Undo posts undo', async () => {
    await view.send({ type: 'snapshot', snapshot: { ...snap, compactionDepth: 2, compaction: { ...c, state: 'adopted' } } });
    assert.equal(await view.page.locator('.cp-adopt').isVisible(), false);
    await view.clearPosted();
    await view.page.locator('.undo-btn').click();
    assert.deepEqual(await view.posted(), [{ type: 'undo' }]);
  });

  it("one progress message moves several blocks' counts (the host joins what one turn brings)", async () => {
    const fresh = makeCompaction(snap, 4);
    await view.send({ type: 'compaction', compaction: { ...fresh, id: 'cmp-progress' } });
    await view.send({
      type: 'block-progress',
      compactionId: 'cmp-progress',
      progress: [
        { index: 1, streamedTokens: 33 },
        { index: 3, streamedTokens: 70 },
      ],
    });
    const fchip = (i: number) => view.page.locator(`.cp-chip[data-block="${i}"]`);
    assert.match((await fchip(1).getAttribute('aria-label')) ?? '', /writing… .*33 tokens so far/);
    assert.match((await fchip(3).getAttribute('aria-label')) ?? '', /writing… .*70 tokens so far/);
    assert.match((await fchip(0).getAttribute('class')) ?? '', /st-queued/);
  });

  it("a batch (one turn of the host's posts) applies its messages in order, past one it cannot use", async () => {
    const fresh = { ...makeCompaction(snap, 4), id: 'cmp-batch' };
    const stats = { inputTokens: 1000, outputTokens: 90, summaryTokens: null, cachedTokens: null, ms: 5 };
    await view.send({
      type: 'batch',
      messages: [
        { type: 'compaction', compaction: fresh },
        { type: 'block-progress', compactionId: 'cmp-batch', progress: [{ index: 2, streamedTokens: 41 }] },
        // Not a message: skipped, and the rest still arrive.
        null as never,
        { type: 'block', compactionId: 'cmp-batch', block: { ...fresh.blocks[1]!, status: 'done', summary: 'b1', stats } },
        // Later in the batch wins over earlier, as if they had come apart.
        { type: 'block-progress', compactionId: 'cmp-batch', progress: [{ index: 2, streamedTokens: 58 }] },
      ],
    });
    const bchip = (i: number) => view.page.locator(`.cp-chip[data-block="${i}"]`);
    assert.match((await bchip(1).getAttribute('class')) ?? '', /st-done/);
    assert.match((await bchip(2).getAttribute('aria-label')) ?? '', /writing… .*58 tokens so far/);
    assert.match((await bchip(0).getAttribute('class')) ?? '', /st-queued/);
    assert.match((await view.page.locator('.cp-meta').textContent()) ?? '', /1\/4 blocks ready/);
    assert.deepEqual(view.errors, []);
  });
});
