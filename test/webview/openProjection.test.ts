/**
 * The projected meter, while a compaction is open, says what Adopt would do: its own blocks and summaries. A UI review
 * saw "≈4 blocks" (the view's guess at 4,096-token blocks) beside a ready compaction whose planner had made 6.
 */
import assert from 'node:assert/strict';
import { formatTokens, type CompactionView } from '../../src/protocol/messages';
import { buildPrefix, project } from '../../webview/projection';
import { expandOverview, openView, type View } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

describe('webview: the projected meter beside an open compaction', function () {
  let view: View;
  const base = makeSnapshot(80);
  // The planner picks the block size ("auto"): the view can only guess the count.
  const snap = { ...base, split: { ...base.split, blockTokens: 0 } };
  const c = makeCompaction(snap, 6);
  const guess = project(buildPrefix(snap.messages, snap.split), snap.gauge, snap.split, snap.split.tailStartIndex);
  const asked = 600;
  const plan = {
    chosen: {
      label: 'target-block 2048 ×8',
      mode: 'parallel' as const,
      layout: 'target-block' as const,
      blockTokens: 2048,
      blocks: 6,
      concurrency: 8,
      summaryTokens: asked,
      predictedMs: 4000,
    },
    alternatives: [],
    profile: 'h100-7b (calibration)',
    measuredMs: null,
  };
  const running: CompactionView = { ...c, plan };
  const used = snap.gauge.used;
  const pct = (n: number) => `${((n / snap.gauge.window) * 100).toFixed(1)}%`;

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  const shown = async () => (await view.page.locator('.m-projected .meter-value').textContent())!;
  const said = async () => (await view.page.getByRole('meter', { name: 'Projected after compaction' }).getAttribute('aria-valuetext'))!;

  it('without a compaction it is the projection, its block count a guess', async () => {
    assert.notEqual(guess.blocks, 6, 'fixture: the guess differs from the plan');
    assert.equal(await shown(), `${formatTokens(guess.projected)} · ${pct(guess.projected)} · ≈${guess.blocks} blocks`);
  });

  it('while the blocks run: the blocks the planner made, and the volume its plan asked for', async () => {
    await view.send({ type: 'compaction', compaction: running });
    const expected = Math.round(used - c.headTokens + asked);
    assert.equal(await shown(), `≈${formatTokens(expected)} · ${pct(expected)} · 6 blocks`);
    assert.match(
      await said(),
      /after adopting the open compaction of .* tokens in 6 blocks \(blocks still running count what their plan asked for\)$/,
    );
    // A finished block counts its own summary; the others their share of what was asked.
    const b0 = { ...c.blocks[0]!, status: 'done' as const, summary: 's0', stats: { ...stats, summaryTokens: 40 } };
    await view.send({ type: 'block', compactionId: c.id, block: b0 });
    const rest = c.blocks.slice(1).reduce((a, b) => a + b.tokens, 0);
    const after0 = Math.round(used - c.headTokens + 40 + (asked * rest) / c.headTokens);
    assert.equal(await shown(), `≈${formatTokens(after0)} · ${pct(after0)} · 6 blocks`);
  });

  it('once every block has its summary: the merged summary, no longer approximate', async () => {
    const totals = {
      summaryTokens: 681,
      compressionRatio: c.headTokens / 681,
      inputTokens: 9000,
      outputTokens: 627,
      cachedTokens: 0,
      wallMs: 900,
    };
    const blocks = c.blocks.map((b) => ({
      ...b,
      status: 'done' as const,
      summary: `s${b.index}`,
      stats: { ...stats, summaryTokens: 100 },
    }));
    await view.send({ type: 'compaction', compaction: { ...running, state: 'ready', blocks, totals } });
    const exact = used - c.headTokens + 681;
    assert.equal(await shown(), `${formatTokens(exact)} · ${pct(exact)} · 6 blocks`);
    // The header says why the merged summary passes its chips' sum.
    assert.match((await view.page.locator('.cp-meta').textContent())!, /summary 681 tok \(blocks 600 \+ ≈81 of merge headings\)/);
    // Told what the merge adds, it says which part is the local count's.
    await view.send({ type: 'compaction', compaction: { ...running, state: 'ready', blocks, totals, headingTokens: 70 } });
    assert.match(
      (await view.page.locator('.cp-meta').textContent())!,
      /summary 681 tok \(blocks 600 \+ 70 of merge headings \+ ≈11 by the local count\)/,
    );
  });

  it('a handle moved elsewhere is projected again, as the compaction Compact here would start', async () => {
    const slider = view.page.getByRole('slider', { name: 'Split point' });
    await slider.focus();
    await view.page.keyboard.press('ArrowLeft');
    const tail = Number(await slider.getAttribute('aria-valuenow'));
    assert.notEqual(tail, snap.split.tailStartIndex);
    const moved = project(buildPrefix(snap.messages, snap.split), snap.gauge, snap.split, tail);
    // Marked as the estimate it is: the open compaction is still what Adopt applies (the second UI review).
    assert.equal(await shown(), `${formatTokens(moved.projected)} · ${pct(moved.projected)} · ≈${moved.blocks} blocks est.`);
    assert.match((await view.page.locator('.ov-line').textContent())!, new RegExp(`split at #${tail} → [\\d,.K]+ after est\\.`));
    assert.match((await slider.getAttribute('aria-valuetext'))!, /\(an estimate: Adopt applies the open compaction at its own split\)/);
  });
});

const stats = { inputTokens: 2000, outputTokens: 100, summaryTokens: 100 as number | null, cachedTokens: 0, ms: 700 };

describe('webview: a compaction split away from the strategy’s', function () {
  let view: View;
  const snap = makeSnapshot(80);
  const k = snap.split.allowed.indexOf(snap.split.tailStartIndex);
  // "Compact here" one place earlier than the strategy's split: the compaction's own split is there.
  const at = snap.split.allowed[k - 1]!;
  const c: CompactionView = { ...makeCompaction({ ...snap, split: { ...snap.split, tailStartIndex: at } }, 3), state: 'ready' };
  const blocks = c.blocks.map((b) => ({ ...b, status: 'done' as const, summary: `s${b.index}`, stats: { ...stats, summaryTokens: 50 } }));
  const totals = {
    summaryTokens: 170,
    compressionRatio: c.headTokens / 170,
    inputTokens: 9000,
    outputTokens: 150,
    cachedTokens: 0,
    wallMs: 900,
  };

  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
    await view.send({ type: 'compaction', compaction: { ...c, blocks, totals } });
  });
  after(async () => view?.close());

  const said = async () => (await view.page.getByRole('meter', { name: 'Projected after compaction' }).getAttribute('aria-valuetext'))!;
  const note = async (): Promise<string | null> => {
    const el = view.page.locator('.gauge-note');
    return (await el.isVisible()) ? await el.textContent() : null;
  };

  it('with the handle at the strategy’s split the figures are an estimate there, and a note says which split Adopt uses', async () => {
    assert.ok(k > 0 && c.tailStartIndex === at, 'fixture: the compaction is split one allowed place earlier');
    assert.match(await said(), new RegExp(`after compacting .* tokens before message ${snap.split.tailStartIndex} in`));
    assert.equal(
      await note(),
      `These figures are for a compaction at the handle (#${snap.split.tailStartIndex}): Compact here plans it. ` +
        `Adopt applies the open compaction, split at #${at}.`,
    );
  });

  it('moved to the compaction’s split, every gauge is the compaction’s own and the note goes', async () => {
    await view.page.getByRole('slider', { name: 'Split point' }).focus();
    await view.page.keyboard.press('ArrowLeft');
    const exact = snap.gauge.used - c.headTokens + 170;
    assert.match(await said(), /after adopting the open compaction of/);
    assert.equal(
      await view.page.locator('.m-projected .meter-value').textContent(),
      `${formatTokens(exact)} · ${((exact / snap.gauge.window) * 100).toFixed(1)}% · 3 blocks`,
    );
    assert.equal(await view.page.locator('.m-io .meter-value').textContent(), `${formatTokens(c.headTokens)} → 170`);
    assert.equal(await note(), null);
    // The timeline's handle says the same as the meter.
    assert.match(
      (await view.page.getByRole('slider', { name: 'Split point' }).getAttribute('aria-valuetext'))!,
      new RegExp(`${formatTokens(c.headTokens)} tokens summarized in 3 blocks`),
    );
  });
});

describe('webview: gauges with nothing to compact', function () {
  let view: View;
  after(async () => view?.close());

  it('say so, instead of "≈0 blocks" and "0 → 0 est."', async () => {
    const base = makeSnapshot(6);
    // The split keeps every message after the frame (a new session, or a strategy that keeps the whole conversation).
    const snap = { ...base, split: { ...base.split, tailStartIndex: base.split.frameEnd, headEnd: base.split.frameEnd } };
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
    assert.match((await view.page.locator('.m-projected .meter-value').textContent())!, / · nothing to compact$/);
    assert.equal(await view.page.locator('.m-io .meter-value').textContent(), '—');
    assert.equal(
      await view.page.getByRole('meter', { name: 'Head → summary tokens' }).getAttribute('aria-valuetext'),
      'nothing to compact',
    );
  });
});

// A UI review switched sessions with the row open: it stayed open on screen, but the saved state said closed, so the
// next reload showed it collapsed.
describe('webview: the row and the pins keep their state across a session switch', function () {
  let view: View;
  after(async () => view?.close());

  it('the saved state keeps them open as the screen shows them', async () => {
    const snap = makeSnapshot(20);
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
    const other = { ...makeSnapshot(12, { seed: 3 }), session: { id: 's0', title: 'Older session', createdAt: 0, messageCount: 12 } };
    await view.send({ type: 'snapshot', snapshot: other });
    await view.frame();
    assert.notEqual(await view.page.locator('details.overview').getAttribute('open'), null, 'open on screen');
    const last = (await view.states()).at(-1) as { overviewOpen: boolean | null; sessionId: string };
    assert.deepEqual({ open: last.overviewOpen, session: last.sessionId }, { open: true, session: 's0' });
  });
});
