import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { CHROMIUM, distinctColours, openView, screenshot, type View, expandOverview } from './harness';
import { makeSnapshot } from './snapshot';

describe('webview: snapshot rendering', function () {
  let view: View;
  before(async function () {
    view = await openView();
  });
  after(async () => view?.close());

  it('requires Debian chromium at /usr/bin/chromium (fails instead of skipping)', () => {
    assert.ok(existsSync(CHROMIUM), `missing ${CHROMIUM}`);
  });

  it('posts ready on load and renders a snapshot', async () => {
    const posted = await view.posted();
    assert.deepEqual(posted[0], { type: 'ready' });
    const snap = makeSnapshot(60);
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
    const p = view.page;
    assert.equal(await p.locator('.chat-list article.msg').count(), 40, 'the chat shows a window of the last 40 messages');
    assert.match((await p.locator('.chat .load-more').first().textContent()) ?? '', /20 more/);
    assert.equal(await p.locator('.pin-list .pin').count(), 1);
    assert.match((await p.locator('.standing-focus').textContent()) ?? '', /keep the DB migration plan/);
    const slider = p.getByRole('slider', { name: 'Split point' });
    assert.equal(await slider.getAttribute('aria-valuenow'), String(snap.split.tailStartIndex));
    assert.equal(await slider.getAttribute('aria-valuemin'), String(snap.split.allowed[0]));
    assert.equal(await slider.getAttribute('aria-valuemax'), String(snap.split.allowed.at(-1)));
    for (const name of ['Context used', 'Projected after compaction', 'Head → summary tokens', 'Compression ratio']) {
      const m = p.getByRole('meter', { name });
      assert.equal(await m.count(), 1, name);
      assert.ok(await m.getAttribute('aria-valuenow'), `${name} has a value`);
      assert.ok(await m.getAttribute('aria-valuemax'));
    }
    const used = p.getByRole('meter', { name: 'Context used' });
    assert.equal(await used.getAttribute('aria-valuenow'), String(snap.gauge.used));
    assert.equal(await used.locator('.meter-mark').count(), 3, 'hi/lo/block marks');
    assert.equal(await p.locator('.undo-btn').isVisible(), true, 'undo shows when compactionDepth > 0');
  });

  it('shows the judge verdict on a summary and expands archived originals on request', async () => {
    const p = view.page;
    await view.send({ type: 'snapshot', snapshot: makeSnapshot(30) });
    const summary = p.locator('article.kind-summary');
    assert.match((await summary.locator('.verdict').textContent()) ?? '', /8\/10.*accepted/);
    await view.clearPosted();
    await summary.locator('.act-expand').click();
    assert.deepEqual(await view.posted(), [{ type: 'expand-summary', summaryId: 'm1' }]);
    await view.send({
      type: 'archived',
      summaryId: 'm1',
      messages: [
        {
          id: 'a1',
          index: 0,
          role: 'user',
          kind: 'normal',
          origin: 'tail',
          tokens: 12,
          content: 'original question about the migration',
          truncated: false,
        },
        { id: 'a2', index: 1, role: 'assistant', kind: 'normal', origin: 'tail', tokens: 30, content: 'original answer', truncated: false },
      ],
    });
    assert.equal(await p.locator('article.kind-summary .archived .arch').count(), 2);
    assert.match((await p.locator('article.kind-summary .archived').textContent()) ?? '', /original question/);
  });

  it('renders markdown safely: no scripts, no images, no inline handlers; code blocks get a bar', async () => {
    const snap = makeSnapshot(6);
    snap.messages.push({
      id: 'evil',
      index: snap.messages.length,
      role: 'assistant',
      kind: 'normal',
      origin: 'tail',
      tokens: 10,
      truncated: false,
      content:
        'Hi <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> [x](javascript:alert(1))\n\n```py\nprint(1)\n```',
    });
    await view.send({ type: 'snapshot', snapshot: snap });
    const p = view.page;
    const art = p.locator('article[data-id="evil"]');
    assert.equal(await art.locator('script, img').count(), 0);
    assert.equal(await art.locator('a[href^="javascript"]').count(), 0);
    assert.equal(await art.locator('.code-bar').count(), 1);
    assert.equal(await art.locator('pre code').textContent(), 'print(1)\n');
    assert.equal(await p.evaluate('window.__pwned'), undefined);
  });

  it('renders a 5,000-message session (windowed chat, one canvas) without CSP violations or errors', async () => {
    const big = makeSnapshot(5000);
    big.session = { ...big.session, id: 's5k' };
    await view.send({ type: 'snapshot', snapshot: big });
    const p = view.page;
    assert.equal(await p.locator('.chat-list article.msg').count(), 40);
    assert.equal(await p.locator('.tl-canvas').count(), 1);
    assert.ok(Number(await p.getByRole('slider', { name: 'Split point' }).getAttribute('aria-valuenow')) > 1000);
    assert.deepEqual(await view.cspViolations(), []);
    assert.deepEqual(view.errors, []);
  });

  it('is not blank (screenshot)', async () => {
    await view.send({ type: 'snapshot', snapshot: makeSnapshot(80) });
    const png = await screenshot(view, 'snapshot-80');
    const colours = await distinctColours(view, png);
    assert.ok(colours > 20, `expected a drawn view, got ${colours} distinct colours`);
  });
});
