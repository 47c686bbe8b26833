import assert from 'node:assert/strict';
import { openView, type View, expandOverview } from './harness';
import { makeSnapshot } from './snapshot';

describe('webview: a dragged split belongs to one version of the context', function () {
  let view: View;
  const snap = makeSnapshot(120);
  const allowed = snap.split.allowed;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  const slider = () => view.page.getByRole('slider', { name: 'Split point' });
  const now = async () => Number(await slider().getAttribute('aria-valuenow'));

  it('keeps the drag across a snapshot of the same version, and drops it when the version changes', async () => {
    const k = allowed.indexOf(snap.split.tailStartIndex);
    await slider().focus();
    await view.page.keyboard.press('ArrowLeft');
    const dragged = allowed[k - 1]!;
    assert.equal(await now(), dragged);

    // Same version (e.g. the panel was shown again): the drag stays.
    await view.send({ type: 'snapshot', snapshot: snap });
    assert.equal(await now(), dragged);

    // A compaction was adopted or undone: the same index names other messages now, so the handle goes back to the strategy.
    await view.send({ type: 'snapshot', snapshot: { ...snap, split: { ...snap.split, version: 'c-other|1' } } });
    assert.equal(await now(), snap.split.tailStartIndex);
    const states = (await view.states()) as { dragTail: number | null; dragVersion: string | null }[];
    assert.deepEqual({ dragTail: states.at(-1)!.dragTail, dragVersion: states.at(-1)!.dragVersion }, { dragTail: null, dragVersion: null });
  });
});

describe('webview: one timeline paint per appended message', function () {
  let view: View;
  const snap = makeSnapshot(80);
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  /** Counts clearRect on the timeline canvas (paintTimeline clears it once per paint); installed once, reset on each call. */
  const countPaints = () =>
    view.page.evaluate(() => {
      type G = { clearRect: (...a: unknown[]) => void; __counted?: boolean };
      const w = globalThis as unknown as { document: { querySelector(s: string): { getContext(k: string): G } }; __paints: number };
      const g = w.document.querySelector('.tl-canvas').getContext('2d');
      w.__paints = 0;
      if (g.__counted) return;
      g.__counted = true;
      const clearRect = g.clearRect.bind(g);
      g.clearRect = (...a: unknown[]) => {
        w.__paints++;
        clearRect(...a);
      };
    });
  const paints = () => view.page.evaluate(() => (globalThis as unknown as { __paints: number }).__paints);

  const { allowed: _allowed, ...rest } = snap.split;
  /** As the host sends it: the split without `allowed`, plus the end of the list. */
  const added = (index: number, tailStartIndex = rest.tailStartIndex) => ({
    type: 'message-added' as const,
    message: {
      id: `x${index}`,
      index,
      role: 'assistant' as const,
      kind: 'normal' as const,
      origin: 'tail' as const,
      tokens: 40,
      content: 'more',
      truncated: false,
    },
    gauge: { ...snap.gauge, used: snap.gauge.used + 40 },
    split: { ...rest, tailStartIndex, allowedFrom: index, allowedAppend: [index, index + 1] },
  });

  it('paints once when the split is unchanged, and once when it moved', async () => {
    await countPaints();
    const n = snap.messages.length;
    await view.send(added(n));
    assert.equal(await paints(), 1);
    await countPaints();
    await view.send(added(n + 1, n));
    assert.equal(await paints(), 1);
    assert.equal(await view.page.getByRole('slider', { name: 'Split point' }).getAttribute('aria-valuemax'), String(n + 2));
  });
});
