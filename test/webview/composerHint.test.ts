import assert from 'node:assert/strict';
import { openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

describe('webview: the composer hint after /compact', function () {
  let view: View;
  const snap = makeSnapshot(40);
  const running = makeCompaction(snap, 4);
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
  });
  after(async () => view?.close());
  const hint = async () => ((await view.page.locator('.composer-hint').textContent()) ?? '').trim();

  async function compact(text: string) {
    const input = view.page.getByRole('combobox', { name: 'Message to the agent' });
    await input.fill(text);
    await input.press('Enter');
  }

  it('says "Compacting with focus …" while the compaction runs and clears it once it is ready', async () => {
    await compact('/compact "keep the DB migration plan"');
    assert.equal(await hint(), 'Compacting with focus “keep the DB migration plan”');
    await view.send({ type: 'compaction', compaction: running });
    assert.equal(await hint(), 'Compacting with focus “keep the DB migration plan”', 'still running');
    const blocks = running.blocks.map((b) => ({ ...b, status: 'done' as const, summary: `summary ${b.index}` }));
    await view.send({ type: 'compaction', compaction: { ...running, state: 'ready', blocks } });
    assert.equal(await hint(), '', 'the ready compaction is in the panel; the hint is gone');
  });

  it('a second /compact while the last one still shows as ready keeps its hint until the new one finishes', async () => {
    await compact('/compact');
    assert.equal(await hint(), 'Compacting…', 'the old ready compaction does not clear the new hint');
    await view.send({ type: 'compaction', compaction: { ...running, id: 'cmp2', focus: null } });
    assert.equal(await hint(), 'Compacting…');
    await view.send({ type: 'compaction', compaction: { ...running, id: 'cmp2', focus: null, state: 'failed' } });
    assert.equal(await hint(), '');
  });

  // The second UI review declined the question before discarding a ready preview: the compaction was kept, and
  // "Compacting with focus …" stayed under the composer with nothing running.
  it('a /compact the host answers with a notice (kept, already running, nothing to compact) drops the hint', async () => {
    await compact('/compact "second focus"');
    assert.equal(await hint(), 'Compacting with focus “second focus”');
    await view.send({ type: 'notice', level: 'info', text: 'The open compaction is kept.' });
    assert.equal(await hint(), '');
  });
});
