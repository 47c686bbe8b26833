import assert from 'node:assert/strict';
import { openView, screenshot, type View, expandOverview } from './harness';
import { makeSnapshot } from './snapshot';

describe('webview: chat, /compact, approvals, pins', function () {
  let view: View;
  const snap = makeSnapshot(40);
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());
  const input = () => view.page.getByRole('combobox', { name: 'Message to the agent' });

  async function submit(text: string) {
    await input().fill(text);
    await input().press('Enter');
  }

  it('sends plain text and /compact in every form, via parseSlashCommand', async () => {
    await view.clearPosted();
    await submit('hello agent');
    await submit('/compact');
    await submit('/compact "keep the DB migration plan"');
    await submit('/compact keep the rollback steps');
    await submit("/compact 'single quoted'");
    assert.deepEqual(await view.posted(), [
      { type: 'send', text: 'hello agent' },
      { type: 'compact', focus: null, tailStartIndex: null },
      { type: 'compact', focus: 'keep the DB migration plan', tailStartIndex: null },
      { type: 'compact', focus: 'keep the rollback steps', tailStartIndex: null },
      { type: 'compact', focus: 'single quoted', tailStartIndex: null },
    ]);
    assert.equal(await input().inputValue(), '');
  });

  it('/compact carries the dragged split point', async () => {
    await view.page.getByRole('slider', { name: 'Split point' }).focus();
    await view.page.keyboard.press('Home');
    await view.clearPosted();
    await submit('/compact');
    assert.deepEqual(await view.posted(), [{ type: 'compact', focus: null, tailStartIndex: snap.split.allowed[0] }]);
    await view.page.getByRole('slider', { name: 'Split point' }).press('Escape');
  });

  it('unknown slash commands are not sent and warn', async () => {
    await view.clearPosted();
    await submit('/frobnicate now');
    assert.deepEqual(await view.posted(), []);
    assert.match((await view.page.locator('.toast-warning').last().textContent()) ?? '', /Unknown command \/frobnicate/);
  });

  it('completes slash commands', async () => {
    await input().fill('');
    await input().pressSequentially('/co');
    const list = view.page.getByRole('listbox', { name: 'Commands' });
    assert.equal(await list.isVisible(), true);
    assert.match((await list.textContent()) ?? '', /\/compact/);
    await input().press('Tab');
    assert.equal(await input().inputValue(), '/compact ');
    assert.equal(await list.isVisible(), false);
    await input().fill('');
  });

  it('walks the input history with Up/Down', async () => {
    await submit('first');
    await submit('second');
    await input().press('ArrowUp');
    assert.equal(await input().inputValue(), 'second');
    await input().press('ArrowUp');
    assert.equal(await input().inputValue(), 'first');
    await input().press('ArrowDown');
    assert.equal(await input().inputValue(), 'second');
    await input().press('ArrowDown');
    assert.equal(await input().inputValue(), '');
  });

  it('streams a reply, shows Stop while running, and clears the stream when the message lands', async () => {
    await view.send({ type: 'agent-state', running: true });
    assert.equal(await view.page.locator('.stop-btn').isVisible(), true);
    await view.send({ type: 'assistant-delta', text: 'Here is **bold**' });
    await view.send({ type: 'assistant-delta', text: ' and `code`' });
    const stream = view.page.locator('article.streaming');
    assert.match((await stream.innerHTML()) ?? '', /<strong>bold<\/strong> and <code>code<\/code>/);
    // The connection dropped and the request is sent again: what streamed is void, the retry streams afresh.
    await view.send({ type: 'assistant-reset' });
    await view.send({ type: 'assistant-delta', text: 'Here is **bold**' });
    await view.send({ type: 'assistant-delta', text: ' and `code`' });
    assert.equal(((await stream.textContent()) ?? '').split('Here is bold and code').length, 2, 'the reply once, not twice');
    await view.clearPosted();
    await view.page.locator('.stop-btn').click();
    assert.deepEqual(await view.posted(), [{ type: 'stop' }]);
    const n = snap.messages.length;
    await view.send({
      type: 'message-added',
      message: {
        id: 'r1',
        index: n,
        role: 'assistant',
        kind: 'normal',
        origin: 'tail',
        tokens: 9,
        content: 'Here is **bold** and `code`',
        truncated: false,
      },
      gauge: snap.gauge,
      split: snap.split,
    });
    await view.send({ type: 'agent-state', running: false });
    assert.equal(await stream.isVisible(), false);
    assert.equal(await view.page.locator('.stop-btn').isVisible(), false);
    assert.equal(await view.page.locator('article[data-id="r1"] strong').textContent(), 'bold');
  });

  it('while no reply text streams, says what the agent waits on and for how long', async () => {
    await view.send({ type: 'agent-state', running: true });
    const stream = view.page.locator('article.streaming');
    const line = () => view.page.locator('article.streaming .md').textContent();
    assert.equal(await line(), 'Working…');
    // The host sends how long it has waited, not a time: the webview's clock need not be the host's.
    await view.send({ type: 'agent-waiting', waiting: { on: 'model', detail: null, elapsedMs: 12_400 } });
    // Seconds read a round trip or two after the send: 12 or, on a busy machine, a little more.
    assert.match(
      (await line())!,
      /^Waiting for the model's first tokens \(the server may be queueing the request or reading its prompt\) · 1[2-4] s$/,
    );
    // The region is live: the seconds, which change every second, are hidden from screen readers.
    assert.match((await view.page.locator('article.streaming .md [aria-hidden="true"]').textContent())!, /^ · 1[2-4] s$/);
    // The seconds count on while it waits, and the line is left in place (not rebuilt, so not read out again).
    // Evaluated through the DevTools protocol, which the page's CSP does not govern.
    await view.page.evaluate(`(() => {
      const md = document.querySelector('article.streaming .md');
      window.__rebuilt = 0;
      new MutationObserver((records) => { window.__rebuilt += records.length; }).observe(md, { childList: true });
    })()`);
    let later = '';
    for (let t = 0; t < 50 && !/· 1[5-9] s$/.test(later); t++) {
      await new Promise((r) => setTimeout(r, 100));
      later = (await line()) ?? '';
    }
    assert.match(later, /· 1[5-9] s$/);
    assert.equal(await view.page.evaluate('window.__rebuilt'), 0, 'the line was not rebuilt as the seconds ticked');
    await view.send({ type: 'agent-waiting', waiting: { on: 'tool', detail: 'run_command', elapsedMs: 0 } });
    assert.match((await line())!, /^Running run_command · [0-2] s$/);
    await view.send({ type: 'agent-waiting', waiting: { on: 'compaction', detail: 'now', elapsedMs: 0 } });
    assert.match((await line())!, /^Compacting the context before the agent goes on · [0-2] s$/);
    await view.send({ type: 'agent-waiting', waiting: { on: 'compaction', detail: 'verdict', elapsedMs: 0 } });
    assert.match((await line())!, /^The judge is checking the summary made while the agent was idle against your message · [0-2] s$/);
    await view.send({ type: 'agent-waiting', waiting: { on: 'compaction', detail: 'amending', elapsedMs: 0 } });
    assert.match((await line())!, /^The judge asked for changes to the summary; it is rewritten before the agent answers · [0-2] s$/);
    // The reply's text ends the wait: the host posts no end of its own then.
    await view.send({ type: 'assistant-delta', text: 'Done.' });
    assert.equal((await line())!.trim(), 'Done.');
    await view.send({ type: 'agent-state', running: false });
    assert.equal(await stream.isVisible(), false);
  });

  it('approval cards show the diff or command; Approve and Reject post', async () => {
    await view.send({
      type: 'approval-requested',
      approval: {
        callId: 'c1',
        tool: 'edit_file',
        summary: 'Edit src/db.ts',
        path: 'src/db.ts',
        diff: '--- a/src/db.ts\n+++ b/src/db.ts\n@@ -1 +1 @@\n-old line\n+new line',
      },
    });
    await view.send({
      type: 'approval-requested',
      approval: { callId: 'c2', tool: 'run_command', summary: 'Run tests', command: 'npm test' },
    });
    const cards = view.page.locator('.approval');
    assert.equal(await cards.count(), 2);
    assert.equal(await cards.nth(0).locator('.d-add').textContent(), '+new line');
    assert.equal(await cards.nth(0).locator('.d-del').textContent(), '-old line');
    assert.equal(await cards.nth(1).locator('.ap-command').textContent(), 'npm test');
    await screenshot(view, 'approvals');
    await view.clearPosted();
    await cards.nth(0).locator('.ap-approve').click();
    await cards.nth(1).locator('.ap-reason').fill('not now');
    await cards.nth(1).locator('.ap-reject').click();
    assert.deepEqual(await view.posted(), [
      { type: 'approve', callId: 'c1' },
      { type: 'reject', callId: 'c2', reason: 'not now' },
    ]);
    await view.send({ type: 'approval-resolved', callId: 'c1', approved: true });
    await view.send({ type: 'approval-resolved', callId: 'c2', approved: false });
    assert.equal(await cards.count(), 0);
  });

  // A UI review found the Adopt and Undo toasts over the composer and Send for their 8 s, at 300 px and at 520 px; at the
  // top they then covered the header's Undo (the diff review).
  it('a notice leaves the composer and Send free', async () => {
    await view.send({ type: 'notice', level: 'info', text: 'Compacted: 18,658 → 4,180 tokens. Undo compaction restores the originals.' });
    await view.send({ type: 'notice', level: 'error', text: 'The server refused the request.' });
    // Nor the header's Undo, which the adoption's notice names.
    for (const target of ['.send-btn', '.undo-btn']) {
      const box = (await view.page.locator(target).boundingBox())!;
      const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
      const hit = await view.page.evaluate(`document.elementFromPoint(${x}, ${y})?.closest('.toast, ${target}')?.className ?? ''`);
      assert.match(String(hit), new RegExp(target.slice(1)), target);
    }
    await view.page.evaluate(`document.querySelectorAll('.toast').forEach((t) => t.remove())`);
  });

  // A UI review saw "Working…" beside an approval card: the agent was waiting for the user, and the line did not say so.
  it('while a tool call waits for approval, the running line says so, and goes back once it is answered', async () => {
    const line = () => view.page.locator('article.streaming .md').textContent();
    await view.send({ type: 'agent-state', running: true });
    await view.send({
      type: 'approval-requested',
      approval: { callId: 'c3', tool: 'run_command', summary: 'Run tests', command: 'npm test' },
    });
    await view.frame();
    assert.match((await line())!, /^Waiting for your approval below/);
    await view.send({ type: 'approval-resolved', callId: 'c3', approved: true });
    await view.frame();
    assert.match((await line())!, /^Working…/);
    await view.send({ type: 'agent-state', running: false });
  });

  it('pins a message, adds, edits and unpins items', async () => {
    await view.clearPosted();
    const art = view.page.locator(`article[data-id="m${snap.messages.length - 2}"]`);
    await art.hover();
    await art.locator('.act-pin').click();
    // Pins live behind a disclosure in the calmer side bar.
    await view.page.locator('.pins > summary').click();
    const pinText = await view.page.locator('.pin-input');
    await pinText.fill('Open loop: add the rollback');
    await pinText.press('Enter');
    const posted = await view.posted();
    assert.equal(posted[0]!.type, 'pin');
    assert.equal((posted[0] as { messageId: string }).messageId, `m${snap.messages.length - 2}`);
    assert.deepEqual(posted[1], { type: 'pin', text: 'Open loop: add the rollback', kind: 'note', messageId: null });
    await view.send({
      type: 'pins',
      pins: [...snap.pins, { id: 'p2', text: 'Open loop: add the rollback', kind: 'open-loop', source: 'agent' }],
    });
    assert.equal(await view.page.locator('.pin-list .pin').count(), 2);
    await view.clearPosted();
    await view.page
      .locator('.pin[data-pin="p2"]')
      .getByRole('button', { name: /Edit pin/ })
      .click();
    await view.page.locator('textarea.pin-edit').fill('Open loop: add the rollback script');
    await view.page.locator('textarea.pin-edit').press('Enter');
    await view.page.locator('.pin[data-pin="p1"]').getByRole('button', { name: /Unpin/ }).click();
    assert.deepEqual(await view.posted(), [
      { type: 'edit-pin', pinId: 'p2', text: 'Open loop: add the rollback script' },
      { type: 'unpin', pinId: 'p1' },
    ]);
  });

  it('the standing focus can be cleared; sessions switch; notices show', async () => {
    await view.clearPosted();
    await view.page.getByRole('button', { name: 'Clear standing focus' }).click();
    await view.page.getByRole('button', { name: 'New session' }).click();
    assert.deepEqual(await view.posted(), [{ type: 'clear-focus' }, { type: 'new-session' }]);
    await view.send({ type: 'notice', level: 'error', text: 'Server unreachable' });
    assert.match((await view.page.getByRole('alert').last().textContent()) ?? '', /Server unreachable/);
    // An error said while the server could not be reached goes once it answers again; any other error stays.
    const alerts = () => view.page.locator('.toast-error').allTextContents();
    await view.send({ type: 'snapshot', snapshot: { ...snap, connection: { state: 'error', message: 'ECONNREFUSED' } } });
    await view.send({ type: 'notice', level: 'error', text: 'The connection to the server was refused (ECONNREFUSED).' });
    assert.equal((await alerts()).length, 2);
    await view.send({ type: 'snapshot', snapshot: { ...snap, connection: { state: 'ok', message: 'sim-model' } } });
    assert.deepEqual(
      (await alerts()).map((t) => t.replace('✕', '')),
      ['Server unreachable'],
    );
    assert.deepEqual(await view.cspViolations(), []);
    assert.deepEqual(view.errors, []);
  });
});
