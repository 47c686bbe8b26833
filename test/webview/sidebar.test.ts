import assert from 'node:assert/strict';
import { seriousViolations } from './axe';
import { expandOverview, openView, screenshot } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

/** Elements wider than their box (cut text, sideways scroll), by a readable name. */
async function clipped(page: import('playwright-core').Page): Promise<string[]> {
  return (await page.evaluate(() => {
    const d = (globalThis as any).document;
    const out: string[] = [];
    if (d.scrollingElement.scrollWidth > d.scrollingElement.clientWidth) out.push('page');
    for (const el of d.querySelectorAll('.top *, .composer *, .welcome *')) {
      const s = (globalThis as any).getComputedStyle(el);
      if (s.display === 'none' || s.visibility === 'hidden' || el.closest('[hidden]') || el.closest('details:not([open]) > :not(summary)'))
        continue;
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && s.overflowX !== 'auto' && s.overflowX !== 'scroll')
        out.push(`${el.tagName.toLowerCase()}.${el.className}`);
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > d.documentElement.clientWidth + 1)
        out.push(`${el.tagName.toLowerCase()}.${el.className} overflows the view`);
    }
    return out;
  })) as string[];
}

describe('webview: a calmer side bar', function () {
  for (const width of [300, 600]) {
    it(`at ${width} px nothing is cut off, and axe finds no serious or critical violations`, async () => {
      const view = await openView({ width, height: 900 });
      try {
        const snap = makeSnapshot(60);
        await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: makeCompaction(snap, 4) } });
        assert.deepEqual(await clipped(view.page), [], 'collapsed');
        assert.deepEqual(await seriousViolations(view.page), []);
        await expandOverview(view);
        assert.deepEqual(await clipped(view.page), [], 'timeline and gauges open');
        assert.deepEqual(await seriousViolations(view.page), []);
        await screenshot(view, `sidebar-${width}`);
      } finally {
        await view.close();
      }
    });
  }

  it('one compact row says context, split and compaction status; it starts collapsed so the chat comes first', async () => {
    const view = await openView({ width: 320, height: 900 });
    try {
      const snap = makeSnapshot(60);
      await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: makeCompaction(snap, 4) } });
      const line = await view.page.locator('.ov-summary').textContent();
      assert.match(line!, new RegExp(`split at #${snap.split.tailStartIndex} → .* after · compaction 0/4`));
      assert.equal(await view.page.locator('.pins').getAttribute('open'), null, 'pins start behind their disclosure');
      assert.equal(await view.page.locator('details.overview').getAttribute('open'), null, 'timeline and gauges start collapsed');
      assert.equal(await view.page.locator('.tl-canvas').isVisible(), false);
      const before = (await view.page.locator('.chat').boundingBox())!.height;
      await view.page.locator('.ov-summary').click();
      await view.frame();
      assert.equal(await view.page.locator('.tl-canvas').isVisible(), true, 'a click opens the timeline');
      const after = (await view.page.locator('.chat').boundingBox())!.height;
      assert.ok(before > after + 100, `chat shrinks from ${before} to ${after} px when the row opens`);
      const states = (await view.states()) as { overviewOpen: boolean }[];
      assert.equal(states.at(-1)!.overviewOpen, true, 'the choice is kept');
    } finally {
      await view.close();
    }
  });

  it('an empty session says what to do first in two lines; the header names the model the server serves', async () => {
    const view = await openView({ width: 300, height: 700 });
    try {
      const snap = makeSnapshot(1);
      await view.send({ type: 'snapshot', snapshot: { ...snap, settings: { ...snap.settings, model: 'Qwen2.5-Coder-7B' } } });
      const w = view.page.locator('.welcome');
      assert.equal(await w.isVisible(), true);
      assert.equal(await w.locator('p').count(), 2);
      assert.match((await w.textContent())!, /Type a task[\s\S]*\/compact "what must survive"[\s\S]*split point/);
      assert.match((await view.page.locator('.conn').textContent())!, /Qwen2\.5-Coder-7B @ http:\/\/localhost:8000\/v1/);
      await view.send({
        type: 'snapshot',
        snapshot: { ...snap, settings: { ...snap.settings, model: null }, connection: { state: 'unknown', message: null } },
      });
      assert.doesNotMatch((await view.page.locator('.conn').textContent())!, /model \?/);
    } finally {
      await view.close();
    }
  });
});
