import assert from 'node:assert/strict';
import { droppedBlockText, lossHeadline, type ReviewState } from '../../src/protocol/review';
import { seriousViolations } from './axe';
import { openView, screenshot, type View } from './harness';
import { makeReviewState } from './reviewFixture';

const HC_THEME = `html {
  --vscode-font-family: sans-serif; --vscode-font-size: 13px; --vscode-editor-font-family: monospace;
  --vscode-foreground: #ffffff; --vscode-editor-background: #000000; --vscode-descriptionForeground: #ffffff;
  --vscode-contrastBorder: #6fc3df; --vscode-contrastActiveBorder: #f38518; --vscode-focusBorder: #f38518;
  --vscode-button-background: #000000; --vscode-button-foreground: #ffffff; --vscode-button-border: #6fc3df;
  --vscode-textLink-foreground: #21a6ff; --vscode-input-background: #000000; --vscode-input-foreground: #ffffff; --vscode-input-border: #6fc3df;
  --vscode-charts-orange: #d18616; --vscode-charts-green: #89d185; --vscode-charts-blue: #3794ff; --vscode-errorForeground: #f48771;
}`;

const review = (state: ReviewState) => ({ type: 'review-state', state }) as never;

describe('review editor (webview)', function () {
  let view: View;
  const state = makeReviewState({ headTokens: 14_000, blocks: 5 });
  const c = state.compaction!;

  before(async () => {
    view = await openView({ bundle: 'review', width: 1400, height: 900 });
    await view.send(review(state));
    assert.equal(await view.page.locator('.rv-row[data-block="0"] .rv-edit').getAttribute('disabled'), null, 'open again');
  });
  after(async () => view?.close());

  it('asks the host for state, then shows one row per block: originals left, summary right', async () => {
    assert.deepEqual((await view.posted())[0], { type: 'review-ready' });
    const rows = view.page.locator('.rv-row');
    assert.equal(await rows.count(), 5);
    for (let i = 0; i < 5; i++) {
      const b = c.blocks[i]!;
      const row = rows.nth(i);
      // Originals are built when a row comes near the viewport.
      await row.scrollIntoViewIfNeeded();
      await view.frame();
      assert.equal(await row.locator('.rv-msg').count(), b.lastMessage - b.firstMessage + 1);
      assert.equal(await row.locator('.rv-sum-text').textContent(), b.summary);
      const o = (await row.locator('.rv-orig').boundingBox())!;
      const s = (await row.locator('.rv-sum').boundingBox())!;
      assert.ok(o.x + o.width <= s.x, `block ${i}: originals left of the summary`);
    }
    assert.equal(await view.page.locator('.rv-strip .seg-block').count(), 5);
    assert.equal(await view.page.locator('.rv-strip .rv-split').count(), 1);
    assert.deepEqual(view.errors, []);
    assert.deepEqual(await view.cspViolations(), []);
  });

  it('every original and summary fits without sideways scroll at 1,400 × 900', async () => {
    const overflow = (await view.page.evaluate(() => {
      const d = (globalThis as any).document;
      const bad: string[] = [];
      if (d.scrollingElement.scrollWidth > d.scrollingElement.clientWidth) bad.push('page');
      for (const el of d.querySelectorAll('.rv-orig, .rv-sum'))
        if (el.scrollWidth > el.clientWidth + 1) bad.push(el.getAttribute('aria-label'));
      return bad;
    })) as string[];
    assert.deepEqual(overflow, []);
    await screenshot(view, 'review-1400');
  });

  it('numbers say what they count: head, summary, ratio; worker prompts only in details', async () => {
    const nums = (await view.page.locator('.rv-numbers').innerText()).replace(/\s+/g, ' ');
    const sumTok = c.blocks.reduce((a, b) => a + b.stats!.outputTokens, 0);
    assert.match(
      nums,
      new RegExp(`Head ${c.headTokens.toLocaleString('en-US').replace(/,/g, ',')}|Head ${(c.headTokens / 1000).toFixed(1)}K`),
    );
    assert.match(nums, new RegExp(`Summary ${sumTok.toLocaleString('en-US')} tok`));
    assert.match(nums, new RegExp(`Ratio ${(c.headTokens / sumTok).toFixed(1)}×`));
    const head = await view.page.locator('.rv-row').first().locator('.rv-nums').textContent();
    assert.match(head!, new RegExp(`^${c.blocks[0]!.tokens.toLocaleString('en-US')} tok in the block`));
    assert.equal(
      await view.page.locator('.rv-row').first().locator('.rv-worker').getAttribute('open'),
      null,
      'worker details start closed',
    );
    assert.match((await view.page.locator('.rv-plan').textContent())!, /predicted 4\.00 s, measured 4\.20 s \(\+5 %\)/);
    // Fastest first; an option ruled out before it was simulated has no time, and is not listed as the fastest.
    const plans = await view.page.locator('.rv-candidates li').allTextContents();
    assert.deepEqual(
      plans.map((t) => t.replace(/ \(ruled out.*\)/, '')),
      [
        '✓ parallel · target-block · 4K blocks: 4.00 s',
        'parallel · cache-aligned · 4K blocks: 9.10 s',
        'sequential, one call: 24.0 s',
        'sequential cache-aligned: no prediction',
      ],
    );
  });

  it('the loss report counts by kind, marks each dropped fact in its original, and jumps to it', async () => {
    const loss = state.loss!;
    assert.ok(loss.dropped.length > 0);
    assert.equal(await view.page.locator('.rv-loss-head').textContent(), lossHeadline(loss));
    // Every dropped fact is marked in its message (facts sharing a key share the mark).
    const marked = (await view.page
      .locator('mark.rv-lost')
      .evaluateAll((els) => [
        ...new Set(els.map((e) => `${e.closest('[data-message]')!.getAttribute('data-message')} ${e.textContent}`)),
      ])) as string[];
    const hasKey = loss.dropped.filter((f) => state.messages[f.messageIndex]!.content.includes(f.key));
    assert.ok(hasKey.length > loss.dropped.length * 0.9, 'nearly all keys appear verbatim in the displayed text');
    assert.deepEqual(marked.sort(), [...new Set(hasKey.map((f) => `${f.messageId} ${f.key}`))].sort());
    // The last fact listed under the first kind (its block is further down the page).
    await view.page.locator('.rv-kind > summary').first().click();
    const link = view.page.locator('.rv-kind').first().locator('.rv-fact').last();
    const key = await link.textContent();
    const f = loss.dropped.find((d) => d.key === key)!;
    await link.click();
    const active = (await view.page.evaluate(() => {
      const a = (globalThis as any).document.activeElement;
      return { text: a.textContent, message: a.closest('[data-message]')?.getAttribute('data-message') };
    })) as { text: string; message: string };
    assert.deepEqual(active, { text: f.key, message: f.messageId });
    assert.ok(await view.page.locator(`.rv-row[data-block="${f.block}"]`).evaluate((e) => e.classList.contains('selected')));
  });

  it('"keep this" pins the fact, or regenerates its block with it in focus', async () => {
    const f = state.loss!.dropped[0]!;
    await view.clearPosted();
    assert.equal(await view.page.locator('.rv-keep-pin').first().isVisible(), true);
    await view.page.locator('.rv-keep-pin').first().click();
    await view.page.locator('.rv-keep-regen').first().click();
    const input = view.page.locator(`.rv-row[data-block="${f.block}"] .rv-focus`);
    assert.equal(await input.inputValue(), `keep ${f.key}`);
    await input.press('Enter');
    assert.deepEqual(await view.posted(), [
      { type: 'review-pin', text: f.text, messageId: f.messageId },
      { type: 'review-regenerate', compactionId: c.id, block: f.block, focus: `keep ${f.key}` },
    ]);
  });

  it('works by keyboard alone: next/previous, edit, drop and keep, regenerate, adopt', async () => {
    await view.clearPosted();
    await view.page.locator('.rv-row').first().focus();
    const kb = view.page.keyboard;
    await kb.press('j');
    await kb.press('j');
    await kb.press('k');
    assert.ok(
      await view.page
        .locator('.rv-row[data-block="1"]')
        .evaluate((e) => e.classList.contains('selected') && e === (globalThis as any).document.activeElement),
    );
    await kb.press('e');
    await kb.press('Control+End');
    await kb.type(' (checked)');
    await kb.press('Control+Enter');
    await kb.press('d');
    const b1 = c.blocks[1]!;
    await view.send({
      type: 'review-block',
      compactionId: c.id,
      block: { ...b1, status: 'edited', summary: droppedBlockText(b1.firstMessage, b1.lastMessage) },
      loss: state.loss,
    } as never);
    assert.equal(await view.page.locator('.rv-row[data-block="1"] .rv-status').textContent(), 'dropped');
    assert.equal(await view.page.locator('.rv-row[data-block="1"] .rv-drop').textContent(), 'Keep');
    await view.page.locator('.rv-row[data-block="1"]').focus();
    await kb.press('d');
    await kb.press('r');
    await kb.press('Enter');
    await kb.press('Control+Enter');
    assert.deepEqual(await view.posted(), [
      { type: 'review-edit', compactionId: c.id, block: 1, text: `${b1.summary} (checked)` },
      { type: 'review-edit', compactionId: c.id, block: 1, text: droppedBlockText(b1.firstMessage, b1.lastMessage) },
      { type: 'review-edit', compactionId: c.id, block: 1, text: b1.summary },
      { type: 'review-regenerate', compactionId: c.id, block: 1, focus: null },
      { type: 'review-adopt', compactionId: c.id },
    ]);
  });

  it('Enter accepts a block and moves to the next; a changed summary needs a new look', async () => {
    await view.page.locator('.rv-row[data-block="0"]').focus();
    await view.page.keyboard.press('Enter');
    assert.equal(await view.page.locator('.rv-row[data-block="0"] .rv-accepted').count(), 1);
    assert.ok(await view.page.locator('.rv-row[data-block="1"]').evaluate((e) => e === (globalThis as any).document.activeElement));
    assert.match((await view.page.locator('.rv-actions .rv-state').textContent())!, /1\/5 accepted/);
    // Cancelled with the host's note: how it ended is said once.
    const c = state.compaction!;
    await view.send(review({ ...state, compaction: { ...c, state: 'cancelled', note: 'Cancelled; nothing was adopted.' } }));
    assert.equal(await view.page.locator('.rv-actions .rv-state').textContent(), 'Cancelled; nothing was adopted.');
    // Nothing to edit, regenerate or drop in a cancelled compaction: its row controls say so.
    for (const cls of ['rv-edit', 'rv-regen', 'rv-drop'])
      assert.equal(await view.page.locator(`.rv-row[data-block="0"] .${cls}`).getAttribute('disabled'), '', cls);
    await view.send(review(state));
    const b0 = c.blocks[0]!;
    await view.send({
      type: 'review-block',
      compactionId: c.id,
      block: { ...b0, status: 'edited', summary: `${b0.summary} (changed)` },
      loss: state.loss,
    } as never);
    assert.equal(await view.page.locator('.rv-row[data-block="0"] .rv-accepted').count(), 0);
    const saved = (await view.states()).at(-1) as { accepted: Record<string, string> };
    assert.equal(saved.accepted[`${c.id}:0`], b0.summary, 'kept in the VS Code state');
  });

  it('Adopt is disabled until every block has a summary; block deltas stream in', async () => {
    const running = makeReviewState({ headTokens: 6_000, blocks: 3, done: false });
    await view.send(review(running));
    assert.equal(await view.page.locator('.rv-adopt').getAttribute('disabled'), '');
    const rc = running.compaction!;
    const streaming = (streamedTokens: number) =>
      view.send({
        type: 'review-block',
        compactionId: rc.id,
        block: { ...rc.blocks[0]!, status: 'streaming', streamedTokens },
        loss: null,
      } as never);
    // Sent, nothing read yet: the row does not claim the worker is writing.
    await streaming(0);
    const sent = (await view.page.locator('.rv-row[data-block="0"] .rv-sum').textContent())!;
    assert.match(sent, /Sent; no tokens read yet \(the server may be queueing the request or reading its prompt\)/);
    assert.doesNotMatch(sent, /Writing/);
    assert.equal(await view.page.locator('.rv-row[data-block="0"] .rv-status').textContent(), 'sent');
    await streaming(42);
    assert.match((await view.page.locator('.rv-row[data-block="0"] .rv-sum').textContent())!, /42 tokens so far/);
    assert.equal(await view.page.locator('.rv-row[data-block="0"] .rv-status').textContent(), 'writing…');
    assert.match((await view.page.locator('.rv-actions .rv-state').textContent())!, /0\/3 ready/);
    // Progress of several blocks in one message (the host joins one turn's worth): each row shows its own count.
    await view.send({
      type: 'review-progress',
      compactionId: rc.id,
      progress: [
        { index: 0, streamedTokens: 90 },
        { index: 2, streamedTokens: 17 },
      ],
    } as never);
    assert.match((await view.page.locator('.rv-row[data-block="0"] .rv-sum').textContent())!, /90 tokens so far/);
    assert.match((await view.page.locator('.rv-row[data-block="2"] .rv-sum').textContent())!, /17 tokens so far/);
    assert.doesNotMatch((await view.page.locator('.rv-row[data-block="1"] .rv-sum').textContent())!, /tokens so far/);
    await view.send({ type: 'review-progress', compactionId: 'other', progress: [{ index: 1, streamedTokens: 5 }] } as never);
    assert.doesNotMatch((await view.page.locator('.rv-row[data-block="1"] .rv-sum').textContent())!, /tokens so far/);
  });

  it('axe-core finds no serious or critical violations', async () => {
    await view.send(review(state));
    const v = await seriousViolations(view.page);
    assert.deepEqual(v, []);
  });
});

describe('review editor: restore and themes', function () {
  it('restores selection and an unsaved edit after a reload (VS Code state)', async () => {
    const state = makeReviewState({ headTokens: 8_000, blocks: 4 });
    const view = await openView({
      bundle: 'review',
      width: 1200,
      height: 800,
      initialState: { selected: 2, drafts: { 'cmp-review:1': 'half-written summary' }, dropped: {}, scrollTop: 0 },
    });
    try {
      await view.send(review(state));
      assert.ok(await view.page.locator('.rv-row[data-block="2"]').evaluate((e) => e.classList.contains('selected')));
      assert.equal(await view.page.locator('.rv-row[data-block="1"] textarea.rv-editor').inputValue(), 'half-written summary');
    } finally {
      await view.close();
    }
  });

  it('in high contrast, dropped facts are outlined rather than tinted', async () => {
    const state = makeReviewState({ headTokens: 6_000, blocks: 2 });
    const view = await openView({ bundle: 'review', width: 1200, height: 800, bodyClass: 'vscode-high-contrast', theme: HC_THEME });
    try {
      await view.send(review(state));
      const style = await view.page
        .locator('mark.rv-lost')
        .first()
        .evaluate((e) => {
          const s = (globalThis as any).getComputedStyle(e);
          return { outline: s.outlineStyle, bg: s.backgroundColor };
        });
      assert.deepEqual(style, { outline: 'dashed', bg: 'rgba(0, 0, 0, 0)' });
      assert.deepEqual(await seriousViolations(view.page), []);
      await screenshot(view, 'review-high-contrast');
    } finally {
      await view.close();
    }
  });

  it('without a compaction, offers to start one with a focus', async () => {
    const state = { ...makeReviewState({ headTokens: 3_000, blocks: 1 }), compaction: null, loss: null, plan: null };
    const view = await openView({ bundle: 'review', width: 1000, height: 700 });
    try {
      await view.send(review(state));
      await view.clearPosted();
      await view.page.locator('.rv-compact-focus').fill('keep the failing test');
      await view.page.locator('.rv-compact-focus').press('Enter');
      assert.deepEqual(await view.posted(), [{ type: 'review-compact', focus: 'keep the failing test' }]);
    } finally {
      await view.close();
    }
  });
});

describe('review editor (webview): the summary count matches the side bar', function () {
  let view: View;
  after(async () => view?.close());

  it('once complete, Summary and Ratio count the merged summary message (block summaries plus part headers), as the side bar does', async () => {
    const state = makeReviewState({ headTokens: 14_000, blocks: 5 });
    const c = state.compaction!;
    const blockSum = c.blocks.reduce((a, b) => a + b.stats!.outputTokens, 0);
    // The merged message carries headers the block summaries do not: the side bar shows this count.
    const merged = blockSum + 102;
    const totals = { ...c.totals!, summaryTokens: merged, compressionRatio: c.headTokens / merged };
    view = await openView({ bundle: 'review', width: 1400, height: 900 });
    await view.send(review({ ...state, compaction: { ...c, totals } }));
    const nums = (await view.page.locator('.rv-numbers').innerText()).replace(/\s+/g, ' ');
    assert.match(nums, new RegExp(`Summary ${merged.toLocaleString('en-US')} tok`));
    assert.match(nums, new RegExp(`Ratio ${(c.headTokens / merged).toFixed(1)}×`));
    // The workers' totals in the side bar's words, which claim nothing about what a layout replays.
    const workers = await view.page.locator('.rv-cache p').textContent();
    assert.match(workers!, new RegExp(`^Workers' prompts [\\d.,K]+ tok in all, [\\d.,K]+ from the prefix cache; wrote [\\d.,K]+ tok\\.$`));
  });
});

describe('review editor (webview): a compaction whose indices no longer hold', function () {
  let view: View;
  const state = makeReviewState({ headTokens: 14_000, blocks: 5 });
  const c = state.compaction!;
  before(async () => {
    view = await openView({ bundle: 'review', width: 1400, height: 900 });
  });
  after(async () => view?.close());

  it('once the context changed under the compaction (adopted: its messages archived), no row shows messages at its old indices', async () => {
    const stale = { ...state, compaction: { ...c, state: 'adopted' as const, version: `${state.split.version}-before` } };
    await view.send(review(stale));
    await view.frame();
    assert.equal(await view.page.locator('.rv-msg').count(), 0);
    // An empty pane said nothing (a UI review): it says where the originals went.
    const first = view.page.locator('.rv-row').first();
    await first.scrollIntoViewIfNeeded();
    await view.frame();
    assert.match((await first.locator('.rv-archived').textContent())!, /no longer in the context: adopted, their originals are archived/);
    // Not adopted (a preview the user's Undo cancelled, say): it does not claim an archive.
    await view.send(review({ ...stale, compaction: { ...stale.compaction, state: 'cancelled' as const } }));
    await view.frame();
    assert.match((await first.locator('.rv-archived').textContent())!, /no longer where this compaction found them/);
    assert.equal(await view.page.locator('.rv-strip .seg-block').count(), 0);
    await view.send(review({ ...state, compaction: { ...c, version: state.split.version } }));
    const row = view.page.locator('.rv-row').first();
    await row.scrollIntoViewIfNeeded();
    await view.frame();
    assert.equal(await row.locator('.rv-msg').count(), c.blocks[0]!.lastMessage - c.blocks[0]!.firstMessage + 1);
    assert.equal(await view.page.locator('.rv-strip .seg-block').count(), c.blocks.length);
  });
});
