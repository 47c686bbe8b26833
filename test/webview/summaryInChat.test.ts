/**
 * An adopted summary's section headings are bare lines ("FACTS:"); right after a list item Markdown read them as part
 * of it, and the chat showed "• none FACTS:". Each heading is a paragraph of its own; the text itself is unchanged.
 */
import assert from 'node:assert/strict';
import type { ViewMessage } from '../../src/protocol/messages';
import { openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

const TEXT = [
  '## Part 1 of 2 (messages #3–#10)',
  'DECISIONS:',
  '- none',
  'FACTS:',
  "- import { HdrError } from '../util/errors';",
  'CONSTRAINTS:',
  '- none',
  'CURRENT WORK:',
  'Retry logic lives in src/util/retry.ts but is only used by the HTTP layer.',
  'NEXT STEP: add retries to src/db/users.ts',
  '```',
  '- kept',
  'OPEN:',
  '```',
].join('\n');

describe('webview: a summary in the chat', function () {
  let view: View;
  const snap = makeSnapshot(10);
  const summary: ViewMessage = { ...snap.messages[1]!, content: TEXT };
  // The same text from the agent is its own Markdown, left as it is.
  const reply: ViewMessage = { ...snap.messages[5]!, role: 'assistant', kind: 'normal', content: TEXT, toolCalls: [], reasoning: '' };
  before(async () => {
    view = await openView();
    const messages = snap.messages.map((m) => (m.index === 1 ? summary : m.index === 5 ? reply : m));
    await view.send({ type: 'snapshot', snapshot: { ...snap, messages } });
  });
  after(async () => view?.close());

  const md = (index: number) => view.page.locator(`article[data-index="${index}"] .md`).first();

  it('each section heading starts a block of its own, not the end of the bullet before it', async () => {
    assert.equal(summary.kind, 'summary');
    const items = await md(1).locator('li').allTextContents();
    assert.deepEqual(items, ['none', "import { HdrError } from '../util/errors';", 'none']);
    // A heading with its text on the same line is a paragraph too; a fenced block is code, kept line for line.
    assert.deepEqual(await md(1).locator('p').allTextContents(), [
      'DECISIONS:',
      'FACTS:',
      'CONSTRAINTS:',
      'CURRENT WORK:',
      'Retry logic lives in src/util/retry.ts but is only used by the HTTP layer.',
      'NEXT STEP: add retries to src/db/users.ts',
    ]);
    assert.equal(await md(1).locator('pre code').textContent(), '- kept\nOPEN:\n');
  });

  it("headings in the conversation's language too, and in the compaction panel's block preview", async () => {
    const french = 'EN COURS :\n- suivi du CRLF\nDÉCISIONS :\n- aucune\nCONTRAINTES :\n- ne jamais modifier vendor/';
    const messages = snap.messages.map((m) => (m.index === 1 ? { ...summary, content: french } : m));
    const c = makeCompaction(snap, 2);
    const blocks = c.blocks.map((b, i) => (i === 0 ? { ...b, status: 'done' as const, summary: TEXT } : b));
    await view.send({ type: 'snapshot', snapshot: { ...snap, messages, compaction: { ...c, state: 'running', blocks } } });
    assert.deepEqual(await md(1).locator('li').allTextContents(), ['suivi du CRLF', 'aucune', 'ne jamais modifier vendor/']);
    await view.page.locator('.cp-chip[data-block="0"]').click();
    const preview = view.page.locator('.cp-preview .pv-body');
    assert.deepEqual(await preview.locator('li').allTextContents(), ['none', "import { HdrError } from '../util/errors';", 'none']);
    // Ready, with sections the check cannot read: the open loops are said not to be counted, not "0, dropped!".
    const checks = { missingPins: [], openLoopsBefore: 3, openLoopsAfter: null, openLoopsDropped: false, grows: false };
    await view.send({ type: 'compaction', compaction: { ...c, state: 'ready', blocks, checks } });
    assert.match((await view.page.locator('.check').allTextContents()).join(' | '), /Open loops 3 → not counted/);
    await view.send({
      type: 'snapshot',
      snapshot: { ...snap, messages: snap.messages.map((m) => (m.index === 1 ? summary : m.index === 5 ? reply : m)) },
    });
  });

  it("only a summary's rendering changes: Pin sends the text as stored, and an agent's reply renders as before", async () => {
    assert.ok((await md(5).locator('li').allTextContents()).includes('none\nFACTS:'), 'Markdown as written');
    await view.clearPosted();
    const art = view.page.locator('article[data-index="1"]');
    await art.hover();
    await art.locator('.act-pin').click();
    const posted = await view.posted();
    assert.deepEqual(posted.at(-1), { type: 'pin', text: TEXT, kind: 'note', messageId: summary.id });
  });
});
