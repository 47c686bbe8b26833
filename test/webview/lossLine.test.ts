import assert from 'node:assert/strict';
import { openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

/** Issue 14.7: before Adopt the side bar's compaction panel says what would be lost, each fact clickable, with "keep this". */
describe('webview: the loss report in the side bar before Adopt', function () {
  let view: View;
  const snap = makeSnapshot(80);
  const base = makeCompaction(snap, 3);
  const done = base.blocks.map((b) => ({ ...b, status: 'done' as const, summary: `summary ${b.index}` }));
  const first = [
    { kind: 'error', key: 'ECONNRESET', text: 'Error: ECONNRESET while fetching', messageId: snap.messages[5]!.id, messageIndex: 5 },
    { kind: 'identifier', key: 'handler5_7', text: 'handler5_7', messageId: snap.messages[9]!.id, messageIndex: 9 },
  ];
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
  });
  after(async () => view?.close());

  it('shows nothing about loss while blocks are still running', async () => {
    await view.send({ type: 'compaction', compaction: base });
    assert.equal(await view.page.locator('.cp-loss').isVisible(), false);
  });

  it('shows the headline and the first dropped facts once ready, next to Adopt', async () => {
    const loss = { headline: 'Dropped 7 of 212 facts: 6 identifiers, 1 error line', dropped: 7, first };
    await view.send({ type: 'compaction', compaction: { ...base, blocks: done, state: 'ready', loss } });
    const panel = view.page.locator('.cp-loss');
    assert.equal(await panel.isVisible(), true);
    assert.match((await panel.textContent())!, /Dropped 7 of 212 facts: 6 identifiers, 1 error line/);
    assert.deepEqual(await view.page.locator('.cp-loss-fact').allTextContents(), ['error: ECONNRESET', 'identifier: handler5_7']);
    assert.equal(await view.page.locator('.cp-adopt').isVisible(), true);
  });

  it('"Keep" pins the fact with its message; "All 7" opens the review editor', async () => {
    await view.clearPosted();
    await view.page.locator('.cp-loss-keep').nth(1).click();
    await view.page.getByText('All 7 in the review editor').click();
    assert.deepEqual(await view.posted(), [
      { type: 'pin', text: 'handler5_7', kind: 'constraint', messageId: snap.messages[9]!.id },
      { type: 'open-review' },
    ]);
  });

  it('clicking a fact selects its original message', async () => {
    await view.page.locator('.cp-loss-fact').first().click();
    await view.frame();
    const selected = await view.page.locator('article.selected').first().getAttribute('data-index');
    assert.equal(selected, '5');
  });
});
