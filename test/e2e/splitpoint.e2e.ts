/**
 * The Splitpoint view in a real VS Code, driven like a person would: the
 * packaged VSIX installed into code-server (or desktop VS Code, see
 * target.ts), the scripted simulator as the model server. Steps run in order
 * and share one window; each saves a screenshot under .test-output/e2e/.
 *
 * Run: node scripts/test-vscode.mjs e2e   (packages the VSIX, then this file)
 */
import assert from 'node:assert/strict';
import { mkdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import type { SimHandle } from '../sim';
import { ROOT, startSim } from '../vscode/harness.mjs';
import { packageVsix } from '../../scripts/package.mjs';
import agentScript from '../vscode/fixtures/agent-script.json';
import { launchTarget, type Target } from './target';
import {
  axeSerious,
  closeReviewEditor,
  openReviewFromPalette,
  REVIEW,
  reloadWindowCommand,
  reviewFrame,
  setSideBarWidth,
  sideways,
} from './review';
import { messageInput, NAMES, numberAttr, openView, until, viewFrame } from './ui';

const OUT = process.env.SPLITPOINT_E2E_OUTPUT ?? join(ROOT, '.test-output', 'e2e');
/** The README's pictures: written by this suite from the real extension, so they never go stale. */
const DOCS = join(ROOT, 'docs', 'images');
const FOCUS = 'keep the parser decisions';
const EDITED = 'EDITED-BY-E2E: keep the Pratt parser in src/parser.ts with ^ at [31, 30].';

describe('Splitpoint in VS Code (e2e)', function () {
  this.timeout(120_000);
  let sim: SimHandle;
  let target: Target;
  let shot = 0;
  let view: Frame;

  const snap = async (name: string) => {
    shot += 1;
    mkdirSync(OUT, { recursive: true });
    await target.page.screenshot({ path: join(OUT, `${String(shot).padStart(2, '0')}-${name}.png`) }).catch(() => {});
  };
  const doc = async (name: string, frame?: Frame) => {
    mkdirSync(DOCS, { recursive: true });
    if (!frame) return void (await target.page.screenshot({ path: join(DOCS, `${name}.png`) }));
    // A webview's own document, clipped to its iframe on the page.
    const el = await frame.frameElement();
    await el.screenshot({ path: join(DOCS, `${name}.png`) });
  };
  const input = () => messageInput(view);
  /** The gauges live in the side bar's collapsed row; their values are read without opening it. */
  const meter = (name: string) => view.getByRole('meter', { name, includeHidden: true });
  /** The README's image sequence of a compaction: each frame clipped to the webview it shows. */
  const frameShot = (n: number, frame: Frame) => doc(`compaction-${n}`, frame);
  const conversation = () => view.getByRole('log', { name: NAMES.conversation });
  const send = async (text: string) => {
    await input().fill(text);
    await input().press('Enter');
    // A completion list may take the first Enter; the Send button always sends.
    const left = await until('the input to clear', async () => ((await input().inputValue()) === '' ? 'empty' : undefined), 1500).catch(
      () => undefined,
    );
    if (!left) await view.getByRole('button', { name: NAMES.send, exact: true }).click();
    await until('the input to clear', async () => (await input().inputValue()) === '');
  };
  const seeInChat = (re: RegExp, timeoutMs = 30_000) => conversation().getByText(re).first().waitFor({ timeout: timeoutMs });
  /** Long tool output may be collapsed: present in the conversation, not necessarily visible. */
  const inChat = (re: RegExp, timeoutMs = 30_000) =>
    conversation().getByText(re).first().waitFor({ state: 'attached', timeout: timeoutMs });

  // The steps build on each other: after one fails, the rest fail at once
  // (naming the step that broke) instead of each waiting for its timeouts.
  let broken: string | undefined;
  const step = (title: string, fn: () => Promise<void>) =>
    it(title, async () => {
      if (broken) throw new Error(`not run: the earlier step "${broken}" failed`);
      try {
        await fn();
      } catch (err) {
        broken = title;
        await snap('FAILED').catch(() => {});
        throw err;
      }
    });

  const cleanup = async () => {
    await target?.close().catch(() => {});
    await sim?.close().catch(() => {});
  };
  const onSignal = () => void cleanup().finally(() => process.exit(130));

  before(async function () {
    this.timeout(240_000);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    mkdirSync(OUT, { recursive: true });
    const vsix =
      process.env.SPLITPOINT_VSIX && existsSync(process.env.SPLITPOINT_VSIX)
        ? process.env.SPLITPOINT_VSIX
        : packageVsix({ root: ROOT, out: join(OUT, 'splitpoint.vsix'), build: false, quiet: true }).vsix;
    // Slow enough to watch blocks stream, fast enough for CI.
    sim = await startSim({ script: agentScript, timeScale: 0.6, summaryTokens: 24 });
    target = await launchTarget({
      vsix,
      settings: {
        'splitpoint.endpoint': sim.url,
        'splitpoint.compaction.blockTokens': 512,
        'splitpoint.compaction.async': false,
        'splitpoint.compaction.idleMinutes': 0,
      },
    });
  });

  after(async () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (target) {
      mkdirSync(OUT, { recursive: true });
      writeFileSync(join(OUT, 'workbench.log'), target.log());
      // The extension's own log (its output channel) names the endpoint it read at each start: a failure after a
      // reload can be read there.
      target.keepLogs(join(OUT, 'logs'));
    }
    await cleanup();
  });

  step('opens the Splitpoint view from the activity bar', async () => {
    view = await openView(target.page);
    await input().waitFor({ state: 'visible' });
    await snap('view-open');
  });

  step('sends a message, asks approval for the tool call, runs it after Approve', async () => {
    await send('Please check the parser');
    const card = view.getByRole('group', { name: NAMES.approvalGroup });
    await card.waitFor({ timeout: 30_000 });
    await view.getByText('node check-parser.js').first().waitFor();
    await snap('approval');
    await card.getByRole('button', { name: NAMES.approve, exact: true }).click();
    await inChat(/parser ok: 12 rules/);
    await seeInChat(/binding powers/);
    await snap('tool-result-and-reply');
  });

  step('builds up a conversation to compact', async () => {
    await send('Summarize the decisions about the lexer');
    await seeInChat(/hand-written loop/);
    await send('What is left to do?');
    await seeInChat(/number scanner/);
    await snap('conversation');
  });

  let usedBefore = 0;
  step(`/compact "${FOCUS}" streams blocks into the overlay`, async () => {
    usedBefore = await numberAttr(meter(NAMES.contextMeter));
    assert.equal(await view.locator('details.overview').getAttribute('open'), null, 'the timeline row starts collapsed');
    await frameShot(1, view);
    await send(`/compact "${FOCUS}"`);
    const blocks = view.getByRole('listbox', { name: NAMES.blocks });
    await blocks.waitFor({ timeout: 30_000 });
    const options = blocks.getByRole('option');
    await until('several blocks', async () => (await options.count()) >= 2);
    // Catch at least one block while it is queued, sent or writing, then all done.
    const labels = async () => Promise.all((await options.all()).map((o) => o.getAttribute('aria-label')));
    const seen = new Set<string>();
    let streamingShot = false;
    await until(
      'every block done',
      async () => {
        const ls = (await labels()).map((l) => l ?? '');
        for (const l of ls)
          for (const st of ['queued', 'sent', 'writing', 'done', 'failed']) if (l.toLowerCase().includes(st)) seen.add(st);
        if (!streamingShot && ls.some((l) => /writing/i.test(l))) {
          streamingShot = true;
          await snap('blocks-streaming');
          await frameShot(2, view);
        }
        return ls.length >= 2 && ls.every((l) => /done/i.test(l));
      },
      60_000,
    );
    assert.ok(!seen.has('failed'), 'no block failed');
    if (!streamingShot) await frameShot(2, view);
    await snap('blocks-done');
    // The sequence's third frame: the summaries beside their originals in the review editor, closed again after.
    await view.getByRole('button', { name: REVIEW.sidebarButton, exact: true }).click();
    const editor = await reviewFrame(target.page);
    await editor.getByRole('region', { name: REVIEW.summary(1) }).waitFor();
    await frameShot(3, editor);
    await closeReviewEditor(target.page);
  });

  step('previews a block, edits its summary, and adopts', async () => {
    const blocks = view.getByRole('listbox', { name: NAMES.blocks });
    await blocks.getByRole('option', { name: NAMES.block(1) }).click();
    await view
      .getByText(/DECISIONS:/)
      .first()
      .waitFor();
    await snap('block-preview');
    await view.getByRole('button', { name: NAMES.edit, exact: true }).click();
    const editor = view.getByRole('textbox', { name: NAMES.editSummary(1) });
    await editor.fill(`DECISIONS:\n- ${EDITED}`);
    await view.getByRole('button', { name: NAMES.save, exact: true }).click();
    await blocks.getByRole('option', { name: /^#1 edited/i }).waitFor();
    await snap('block-edited');
    await view.getByRole('button', { name: NAMES.adopt, exact: true }).click();
    await seeInChat(/EDITED-BY-E2E/);
    const usedAfter = await until('the context gauge to drop', async () => {
      const v = await numberAttr(meter(NAMES.contextMeter));
      return v < usedBefore ? v : undefined;
    });
    assert.ok(usedAfter < usedBefore);
    await snap('adopted');
    await frameShot(4, view);
  });

  step('drags the split point with the mouse and moves it with arrow keys; the projected gauge follows', async () => {
    // One more turn, so the kept tail has more than one place to split.
    await send('Please remember the release codename');
    await seeInChat(/pelican-42/);
    // The timeline and gauges are behind the side bar's compact row: open it as a user would.
    const row = view.locator('details.overview');
    if ((await row.getAttribute('open')) === null) await row.locator('summary').click();
    await until('the timeline row to open', async () => (await row.getAttribute('open')) !== null);
    const slider = view.getByRole('slider', { name: NAMES.slider });
    const projected = view.getByRole('meter', { name: NAMES.projectedMeter });
    await slider.waitFor();
    const min = await numberAttr(slider, 'aria-valuemin');
    const max = await numberAttr(slider, 'aria-valuemax');
    assert.ok(max > min, `the slider has a range (${min}..${max})`);
    const v0 = await numberAttr(slider);
    const p0 = await numberAttr(projected);

    // Mouse: drag the handle to the far end away from where it is.
    const handle = (await slider.boundingBox())!;
    const track = (await view.getByLabel(NAMES.timeline).first().boundingBox())!;
    const toLeft = v0 - min > max - v0;
    const x0 = handle.x + handle.width / 2;
    const y0 = handle.y + handle.height / 2;
    const x1 = toLeft ? track.x + 4 : track.x + track.width - 4;
    await target.page.mouse.move(x0, y0);
    await target.page.mouse.down();
    await target.page.mouse.move(x1, y0, { steps: 12 });
    await target.page.mouse.up();
    const v1 = await until('the handle to move', async () => {
      const v = await numberAttr(slider);
      return v !== v0 ? v : undefined;
    });
    const p1 = await numberAttr(projected);
    assert.notEqual(p1, p0, 'the projected gauge changed with the drag');
    await snap('split-dragged');

    // Keyboard: one step back the other way.
    await slider.focus();
    await target.page.keyboard.press(toLeft ? 'ArrowRight' : 'ArrowLeft');
    const v2 = await until('the handle to step', async () => {
      const v = await numberAttr(slider);
      return v !== v1 ? v : undefined;
    });
    assert.ok(toLeft ? v2 > v1 : v2 < v1, `ArrowKey moved ${v1} -> ${v2}`);
    const p2 = await numberAttr(projected);
    assert.notEqual(p2, p1, 'the projected gauge changed with the key');
    await snap('split-keys');
  });

  step('undoes the compaction: the originals are back', async () => {
    const usedNow = await numberAttr(view.getByRole('meter', { name: NAMES.contextMeter }));
    await view.getByRole('button', { name: NAMES.undo, exact: true }).click();
    await until(
      'the context gauge to grow back',
      async () => (await numberAttr(view.getByRole('meter', { name: NAMES.contextMeter }))) > usedNow,
    );
    await inChat(/parser ok: 12 rules/);
    await snap('undone');
  });

  step('finds the session again after reloading the window', async () => {
    await target.reload();
    view = await openView(target.page).catch(() => viewFrame(target.page));
    await seeInChat(/pelican-42/, 30_000);
    await seeInChat(/Please check the parser/);
    await snap('after-reload');
  });

  /** Waits until every block chip in the side bar says done (or edited). */
  const allBlocksDone = async () => {
    const options = view.getByRole('listbox', { name: NAMES.blocks }).getByRole('option');
    await until('several blocks', async () => (await options.count()) >= 2, 30_000);
    await until(
      'every block done',
      async () => {
        const ls = await Promise.all((await options.all()).map((o) => o.getAttribute('aria-label')));
        return ls.length >= 2 && ls.every((l) => /done|edited/i.test(l ?? ''));
      },
      60_000,
    );
    return options.count();
  };
  let review: Frame;
  let blockCount = 0;

  step('the side bar at 300 px and 600 px: nothing cut off, no serious axe violations', async () => {
    await send('/compact "keep the release codename"');
    blockCount = await allBlocksDone();
    for (const width of [300, 600]) {
      const got = await setSideBarWidth(target.page, width);
      assert.ok(Math.abs(got - width) <= 12, `side bar is ${got} px wide, wanted ${width}`);
      view = await viewFrame(target.page);
      await view.getByRole('button', { name: NAMES.adopt, exact: true }).waitFor();
      assert.deepEqual(await sideways(view, '.top *, .composer *'), [], `nothing scrolls sideways at ${width} px`);
      assert.deepEqual(await axeSerious(view), [], `axe at ${width} px`);
      await snap(`sidebar-${width}`);
      await doc(`sidebar-${width}`);
    }
  });

  step('opens the review editor from the side bar', async () => {
    await view.getByRole('button', { name: REVIEW.sidebarButton, exact: true }).click();
    review = await reviewFrame(target.page);
    await review.getByRole('region', { name: REVIEW.summary(1) }).waitFor();
    await snap('review-from-sidebar');
    await doc('review-editor');
  });

  step('opens the review editor from the command palette', async () => {
    await closeReviewEditor(target.page);
    review = await openReviewFromPalette(target.page);
    await review.getByRole('region', { name: REVIEW.summary(blockCount) }).waitFor();
  });

  step('at 1,400 × 900 every block shows its originals beside its summary without sideways scroll; axe finds nothing serious', async () => {
    const rows = await review.getByRole('region', { name: /^Block \d+ summary$/ }).count();
    assert.equal(rows, blockCount, 'one row per block');
    for (let n = 1; n <= blockCount; n++) {
      const orig = review.getByRole('region', { name: REVIEW.original(n) });
      await orig.scrollIntoViewIfNeeded();
      await review
        .getByRole('region', { name: REVIEW.original(n) })
        .locator('article')
        .first()
        .waitFor();
      const o = (await orig.boundingBox())!;
      const sm = (await review.getByRole('region', { name: REVIEW.summary(n) }).boundingBox())!;
      assert.ok(o.x + o.width <= sm.x + 1 && Math.abs(o.y - sm.y) < 4, `block ${n}: originals beside the summary`);
    }
    assert.deepEqual(await sideways(review, '.rv-orig, .rv-sum'), []);
    assert.deepEqual(await axeSerious(review), []);
  });

  step('edits, regenerates, drops and keeps a block, and adopts, by keyboard alone', async () => {
    const kb = target.page.keyboard;
    const status = (n: number) => review.locator(`.rv-row[data-block="${n - 1}"] .rv-status`);
    await review.getByRole('region', { name: REVIEW.summary(1) }).focus();
    await kb.press('j');
    await kb.press('k');
    // Edit block 1 in place.
    await kb.press('e');
    const editor = review.getByRole('textbox', { name: REVIEW.editor(1) });
    await editor.waitFor();
    await kb.press('Control+End');
    await kb.type('\nREVIEWED-BY-KEYBOARD');
    await kb.press('Control+Enter');
    await until('block 1 edited', async () => (await status(1).textContent()) === 'edited');
    // Regenerate block 2 with a focus.
    await kb.press('j');
    await kb.press('r');
    await review.getByRole('textbox', { name: REVIEW.focus(2) }).waitFor();
    await kb.type('the release codename');
    await kb.press('Enter');
    await until('block 2 to be redone', async () => (await status(2).textContent()) !== 'done', 10_000).catch(() => undefined);
    await until('block 2 regenerated', async () => (await status(2).textContent()) === 'done', 60_000);
    // Drop it, then keep it again.
    await kb.press('d');
    await until('block 2 dropped', async () => (await status(2).textContent()) === 'dropped');
    await snap('review-dropped');
    await kb.press('d');
    await until('block 2 kept', async () => (await status(2).textContent()) !== 'dropped');
    await snap('review-keyboard');
    await kb.press('a');
    await until('adopted', async () => /Adopted/.test((await review.getByRole('status').first().textContent()) ?? ''), 30_000);
    await seeInChat(/REVIEWED-BY-KEYBOARD/);
  });

  step('the review editor comes back after a reload (its serializer) and asks the host for its state', async () => {
    await reloadWindowCommand(target.page);
    const tab = () => target.page.getByRole('tab', { name: /^Review Compaction/ }).count();
    review = await reviewFrame(target.page, 45_000).catch(async (e: unknown) => {
      // With its tab restored and no webview, the serializer failed: that is ours, and fails the step.
      if ((await tab()) > 0) throw e;
      // No tab at all: VS Code web reloaded before it had stored its editor layout (seen once in four
      // clean runs). Open the editor again, let VS Code store the layout, and reload once more.
      console.log('[e2e] VS Code did not restore the editor layout after the reload; reopening the review editor and reloading again');
      await openReviewFromPalette(target.page);
      await new Promise((r) => setTimeout(r, 3000));
      await reloadWindowCommand(target.page);
      return reviewFrame(target.page, 45_000);
    });
    // The adopted compaction is history now: the restored editor offers to start the next one.
    await review.getByText(/No compaction is open/).waitFor({ timeout: 30_000 });
    await snap('review-restored');
  });
});
