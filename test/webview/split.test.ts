import assert from 'node:assert/strict';
import { openView, screenshot, type View, expandOverview } from './harness';
import { makeSnapshot } from './snapshot';
import { buildPrefix, project } from '../../webview/projection';

describe('webview: split handle and gauges', function () {
  let view: View;
  const snap = makeSnapshot(200);
  const allowed = snap.split.allowed;
  const prefix = buildPrefix(snap.messages, snap.split);
  const projected = (tail: number) => project(prefix, snap.gauge, snap.split, tail).projected;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  const slider = () => view.page.getByRole('slider', { name: 'Split point' });
  const now = async () => Number(await slider().getAttribute('aria-valuenow'));
  const projectedMeter = async () =>
    Number(await view.page.getByRole('meter', { name: 'Projected after compaction' }).getAttribute('aria-valuenow'));

  it('keyboard moves snap to allowed boundaries and update the projected meter, with no host messages', async () => {
    await view.clearPosted();
    const start = snap.split.tailStartIndex;
    const k = allowed.indexOf(start);
    assert.ok(k > 0);
    await slider().focus();
    await view.page.keyboard.press('ArrowRight');
    assert.equal(await now(), allowed[k + 1]);
    assert.equal(await projectedMeter(), projected(allowed[k + 1]!));
    await view.page.keyboard.press('ArrowLeft');
    await view.page.keyboard.press('ArrowLeft');
    assert.equal(await now(), allowed[k - 1]);
    await view.page.keyboard.press('Home');
    assert.equal(await now(), allowed[0]);
    await view.page.keyboard.press('PageUp');
    assert.equal(await now(), allowed[10]);
    await view.page.keyboard.press('End');
    assert.equal(await now(), allowed.at(-1));
    assert.equal(await projectedMeter(), projected(allowed.at(-1)!));
    assert.match((await slider().getAttribute('aria-valuetext')) ?? '', /tokens summarized/);
    assert.deepEqual(await view.posted(), [], 'no host round trip per step');
  });

  it('"Compact here" posts compact with the handle position; Reset returns to the strategy choice', async () => {
    await view.clearPosted();
    await view.page.locator('.tl-compact').click();
    assert.deepEqual(await view.posted(), [{ type: 'compact', focus: null, tailStartIndex: allowed.at(-1) }]);
    await view.page.locator('.tl-reset').click();
    assert.equal(await now(), snap.split.tailStartIndex);
    // Not moved: the strategy's own split, which the host computes, not a manual split at its tail start.
    await view.clearPosted();
    await view.page.locator('.tl-compact').click();
    assert.deepEqual(await view.posted(), [{ type: 'compact', focus: null, tailStartIndex: null }]);
  });

  it('mouse drag snaps to the nearest allowed boundary and updates the gauges live', async () => {
    await view.clearPosted();
    const box = (await slider().boundingBox())!;
    const surface = (await view.page.locator('.tl-surface').boundingBox())!;
    await view.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await view.page.mouse.down();
    const targetX = surface.x + surface.width * 0.25;
    await view.page.mouse.move(targetX, box.y + 5, { steps: 8 });
    const mid = await now();
    assert.ok(allowed.includes(mid), `${mid} is an allowed boundary`);
    assert.ok(mid < snap.split.tailStartIndex);
    // Nearest allowed boundary by token offset.
    const off = ((targetX - surface.x) / surface.width) * prefix.total;
    const best = allowed.reduce((a, b) => (Math.abs(prefix.all[b]! - off) < Math.abs(prefix.all[a]! - off) ? b : a));
    assert.equal(mid, best);
    assert.equal(await projectedMeter(), projected(mid));
    await view.page.mouse.up();
    assert.deepEqual(await view.posted(), [], 'dragging posts nothing');
    await view.page.locator('.tl-compact').click();
    assert.deepEqual(await view.posted(), [{ type: 'compact', focus: null, tailStartIndex: mid }]);
    await screenshot(view, 'split-dragged');
  });

  it('persists the drag position with setState and restores it on reload', async () => {
    const states = (await view.states()) as { dragTail: number | null }[];
    const last = states.at(-1)!;
    assert.equal(last.dragTail, await now());
    const again = await openView({ initialState: last });
    try {
      await again.send({ type: 'snapshot', snapshot: snap });
      assert.equal(await again.page.getByRole('slider', { name: 'Split point' }).getAttribute('aria-valuenow'), String(last.dragTail));
    } finally {
      await again.close();
    }
  });

  it('the strategy picker posts set-strategy and the host answer resets the handle', async () => {
    await view.clearPosted();
    await view.page.evaluate(() => {
      const w = globalThis as any;
      const sel = w.document.querySelector('.tl-strategy');
      sel.value = 'recent-turns';
      sel.dispatchEvent(new w.Event('change'));
    });
    assert.deepEqual(await view.posted(), [{ type: 'set-strategy', strategy: 'recent-turns' }]);
    const newTail = allowed.at(-2)!;
    await view.send({ type: 'split', split: { ...snap.split, strategy: 'recent-turns', tailStartIndex: newTail } });
    assert.equal(await now(), newTail);
    assert.equal(await view.page.locator('.tl-reset').getAttribute('disabled'), '');
  });

  it('message-added appends a segment and moves the gauges', async () => {
    const m = {
      id: 'new',
      index: snap.messages.length,
      role: 'user' as const,
      kind: 'normal' as const,
      origin: 'tail' as const,
      tokens: 500,
      content: 'one more',
      truncated: false,
    };
    const gauge = { ...snap.gauge, used: snap.gauge.used + 500 };
    await view.send({
      type: 'message-added',
      message: m,
      gauge,
      split: { ...snap.split, strategy: 'recent-turns', tailStartIndex: allowed.at(-2)!, allowed: [...allowed, m.index] },
    });
    assert.equal(await view.page.getByRole('meter', { name: 'Context used' }).getAttribute('aria-valuenow'), String(gauge.used));
    assert.equal(await slider().getAttribute('aria-valuemax'), String(m.index));
    assert.equal(await view.page.locator('article[data-id="new"]').count(), 1);
  });
});
