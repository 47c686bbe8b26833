import assert from 'node:assert/strict';
import { openView, type View } from './harness';
import { makeSnapshot } from './snapshot';

describe('webview: a dragged split belongs to one version of the context', function () {
  let view: View;
  const snap = makeSnapshot(120);
  const allowed = snap.split.allowed;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
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
