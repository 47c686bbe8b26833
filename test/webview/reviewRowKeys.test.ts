/**
 * The review editor's row keys (Enter accepts, the arrows, Home and End move) work wherever the focus is in the row,
 * not on the row element alone: a click in a block's summary focuses that region, and the keys did nothing there.
 */
import assert from 'node:assert/strict';
import type { ReviewState } from '../../src/protocol/review';
import { openView, type View } from './harness';
import { makeReviewState } from './reviewFixture';

const review = (state: ReviewState) => ({ type: 'review-state', state }) as never;

describe('review editor (webview): row keys from inside a row', function () {
  let view: View;
  const state = makeReviewState({ headTokens: 14_000, blocks: 5 });
  const c = state.compaction!;

  before(async () => {
    view = await openView({ bundle: 'review', width: 1400, height: 900 });
    await view.send(review(state));
  });
  after(async () => view?.close());

  const row = (i: number) => view.page.locator(`.rv-row[data-block="${i}"]`);
  const selected = async () => Number(await view.page.locator('.rv-row.selected').getAttribute('data-block'));
  const clickSummary = async (i: number) => {
    await row(i).scrollIntoViewIfNeeded();
    await row(i).locator('.rv-sum-text').click();
    await view.frame();
  };

  it('after a click in a summary, the arrows, Home and End move between blocks', async () => {
    await clickSummary(1);
    assert.equal(
      await row(1)
        .locator('.rv-sum')
        .evaluate((e) => e === (globalThis as any).document.activeElement),
      true,
    );
    assert.equal(await selected(), 1);
    await view.page.keyboard.press('ArrowDown');
    assert.equal(await selected(), 2);
    await clickSummary(3);
    await view.page.keyboard.press('ArrowUp');
    assert.equal(await selected(), 2);
    await clickSummary(2);
    await view.page.keyboard.press('End');
    assert.equal(await selected(), 4);
    await clickSummary(4);
    await view.page.keyboard.press('Home');
    assert.equal(await selected(), 0);
  });

  it('Enter in a summary accepts its block', async () => {
    await clickSummary(2);
    await view.page.keyboard.press('Enter');
    assert.equal(await row(2).locator('.rv-accepted').count(), 1);
    assert.equal(await selected(), 3);
  });

  it("a row's own buttons keep Enter, and a summary taller than its box keeps the arrows to scroll it", async () => {
    await row(0).scrollIntoViewIfNeeded();
    await row(0).locator('.rv-edit').focus();
    await view.page.keyboard.press('Enter');
    await view.frame();
    assert.equal(await row(0).locator('.rv-accepted').count(), 0, 'Enter on Edit does not accept');
    assert.equal(await row(0).locator('textarea').count(), 1, 'it opens the editor');
    await view.page.keyboard.press('Escape');
    const b3 = c.blocks[3]!;
    const long = Array.from({ length: 80 }, (_, k) => `Line ${k} of a long summary.`).join('\n');
    await view.send({ type: 'review-block', compactionId: c.id, block: { ...b3, summary: long }, loss: state.loss } as never);
    await clickSummary(3);
    const sum = row(3).locator('.rv-sum');
    assert.ok(await sum.evaluate((e) => e.scrollHeight > e.clientHeight), 'fixture: the summary overflows');
    await view.page.keyboard.press('ArrowDown');
    assert.equal(await selected(), 3);
    assert.ok((await sum.evaluate((e) => e.scrollTop)) > 0, 'ArrowDown scrolled the summary');
  });
});
