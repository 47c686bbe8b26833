import assert from 'node:assert/strict';
import { buildPrefix, project } from '../../webview/projection';
import { openView, type View, expandOverview } from './harness';
import { makeCompaction, makeSnapshot } from './snapshot';

/** Issue 16: after a compaction "In → out" showed 14.8K → 172 for a 3,058-token head; chips showed prompt sizes. */
describe('webview: meters count what they say', function () {
  let view: View;
  const snap = makeSnapshot(80);
  const c = makeCompaction(snap, 3);
  // Workers replay what precedes their block: prompts far larger than the blocks themselves.
  const stats = (i: number) => ({
    inputTokens: 5000 + i * 4000,
    outputTokens: 60 + i,
    summaryTokens: null,
    cachedTokens: 4800 + i * 4000,
    ms: 700,
  });
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
    await expandOverview(view);
  });
  after(async () => view?.close());

  it('while running, the head → summary meter counts the head and finished summaries, not worker prompts', async () => {
    await view.send({ type: 'compaction', compaction: c });
    await view.send({ type: 'block', compactionId: c.id, block: { ...c.blocks[0]!, status: 'done', summary: 's0', stats: stats(0) } });
    const io = view.page.getByRole('meter', { name: 'Head → summary tokens' });
    const text = await io.getAttribute('aria-valuetext');
    assert.ok(c.headTokens >= 10_000 && c.headTokens < 100_000, 'fixture: shown as 12.3K');
    // The finished block's own 60, and for the blocks still running their share of the volume asked (no plan here: the
    // view's estimate for this split), never a worker's prompt (5,000 tokens and up).
    const asked = project(buildPrefix(snap.messages, snap.split), snap.gauge, snap.split, snap.split.tailStartIndex).summaryTokens;
    const rest = c.headTokens - c.blocks[0]!.tokens;
    const summary = Math.round(60 + (asked * rest) / c.headTokens);
    assert.equal(
      text,
      `head ${(c.headTokens / 1000).toFixed(1)}K tokens, summary ≈${summary.toLocaleString('en-US')} tokens (blocks still running count what their plan asked for)`,
    );
    const ratio = Number(await view.page.getByRole('meter', { name: 'Compression ratio' }).getAttribute('aria-valuenow'));
    assert.equal(ratio, Math.round((c.headTokens / summary) * 100) / 100, 'ratio = the head over that summary');
  });

  it("a block chip shows the block's own tokens → its summary; the worker's prompt only under Worker details", async () => {
    const chip = view.page.locator('.cp-chip[data-block="0"] .chip-io');
    assert.equal(await chip.textContent(), `${c.blocks[0]!.tokens.toLocaleString('en-US')}→60`);
    await view.page.locator('.cp-chip[data-block="0"]').click();
    const details = view.page.locator('.cp-preview details.pv-worker');
    assert.equal(await details.getAttribute('open'), null);
    assert.match((await details.textContent())!, /prompt 5,000 tok \(4,800 cached\)/);
    assert.doesNotMatch((await view.page.locator('.cp-preview .pv-head').textContent())!, /5,000/);
  });
  it("an edited block shows the user's summary size; its worker's output is marked as replaced", async () => {
    const b0 = { ...c.blocks[0]!, status: 'edited' as const, summary: 'x'.repeat(200), stats: stats(0) };
    await view.send({ type: 'block', compactionId: c.id, block: b0 });
    // No count from the host yet: a chars/4 guess, and said so.
    assert.equal(
      await view.page.locator('.cp-chip[data-block="0"] .chip-io').textContent(),
      `${c.blocks[0]!.tokens.toLocaleString('en-US')}→≈50`,
    );
    // The host's count (the session's token counter) is the number shown, unmarked.
    await view.send({ type: 'block', compactionId: c.id, block: { ...b0, editedTokens: 41 } });
    assert.equal(
      await view.page.locator('.cp-chip[data-block="0"] .chip-io').textContent(),
      `${c.blocks[0]!.tokens.toLocaleString('en-US')}→41`,
    );
    await view.page.locator('.cp-chip[data-block="0"]').click();
    assert.match(
      (await view.page.locator('.cp-preview details.pv-worker').textContent())!,
      /wrote 60 tok in 700 ms \(replaced by your edit\)/,
    );
  });

  it('shows the plan with predicted against measured, and opens the review editor', async () => {
    const opt = (label: string, predictedMs: number | null) => ({
      label,
      mode: 'parallel' as const,
      layout: 'target-block' as const,
      blockTokens: 4096,
      blocks: 3,
      concurrency: 8,
      summaryTokens: 900,
      predictedMs,
    });
    const plan = {
      chosen: opt('target-block 4096 ×8', 4000),
      alternatives: [
        { ...opt('cache-aligned 4096 ×8', 9000), excluded: 'slows the agent 2.3×' },
        // Ruled out before it was simulated: the planner gives it no time (null), which is not "0.0 s".
        { ...opt('sequential cache-aligned', null), excluded: "worker 1's prompt does not fit the window" },
      ],
      profile: 'h100-7b (calibration)',
      measuredMs: 4600,
    };
    await view.send({ type: 'compaction', compaction: { ...c, plan } });
    assert.equal(
      await view.page.locator('.cp-plan-line').textContent(),
      'Plan: target-block 4096 ×8 — predicted 4.0 s, measured 4.6 s (+15 %)',
    );
    assert.match(
      (await view.page.locator('.cp-plan-alts').textContent())!,
      /cache-aligned 4096 ×8: 9\.0 s \(ruled out: slows the agent 2\.3×\)/,
    );
    assert.match(
      (await view.page.locator('.cp-plan-alts').textContent())!,
      /sequential cache-aligned: no prediction \(ruled out: worker 1's prompt does not fit the window\)/,
    );
    assert.equal(await view.page.locator('.cp-plan-load').count(), 0, 'no load line when the plan counted none');
    // Every option ruled out before it could be simulated: the one that runs has no prediction, not "0.0 s (+N %)".
    await view.send({ type: 'compaction', compaction: { ...c, plan: { ...plan, chosen: opt('sequential cache-aligned', null) } } });
    assert.equal(await view.page.locator('.cp-plan-line').textContent(), 'Plan: sequential cache-aligned — no prediction, measured 4.6 s');
    // A plan made around other clients' work says what it counted on.
    await view.send({
      type: 'compaction',
      compaction: { ...c, plan: { ...plan, serverLoad: 'the server: 12 other requests running, 310K KV tokens' } },
    });
    assert.equal(
      await view.page.locator('.cp-plan-load').textContent(),
      'Planned around the server: 12 other requests running, 310K KV tokens',
    );
    await view.clearPosted();
    await view.page.locator('.cp-review').click();
    assert.deepEqual(await view.posted(), [{ type: 'open-review' }]);
  });

  it('cached tokens the server did not report are not shown as 0', async () => {
    const totals = { summaryTokens: 300, compressionRatio: 8, inputTokens: 9000, outputTokens: 300, cachedTokens: 4800, wallMs: 900 };
    const cache = () => view.page.locator('.cp-cache span').textContent();
    await view.send({ type: 'compaction', compaction: { ...c, state: 'ready', totals } });
    assert.match((await cache())!, /9,000 tok in all, 4,800 from the prefix cache/);
    await view.send({ type: 'compaction', compaction: { ...c, state: 'ready', totals: { ...totals, cachedTokens: null } } });
    assert.match((await cache())!, /9,000 tok in all, the server did not report how many from the prefix cache/);
  });

  it('once the context changed under a compaction, its message links go by id and its old indices are not offered', async () => {
    const kept = snap.messages[snap.messages.length - 3]!;
    const loss = {
      headline: 'Dropped 2 of 9 facts',
      dropped: 2,
      first: [
        { kind: 'identifier' as const, key: 'parseHeader', text: 'parseHeader', messageId: kept.id, messageIndex: 2 },
        { kind: 'path' as const, key: 'src/a.ts', text: 'src/a.ts', messageId: 'archived-1', messageIndex: 3 },
      ],
    };
    const stale = { ...c, state: 'ready' as const, loss, version: `${snap.split.version}-before` };
    await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: stale } });
    await expandOverview(view);
    const facts = view.page.locator('.cp-loss-fact');
    assert.deepEqual(
      await facts.evaluateAll((els) => els.map((e) => e.tagName)),
      ['A', 'SPAN'],
      'a fact whose message is gone has no link',
    );
    await facts.first().click();
    assert.equal(await view.page.locator(`article[data-id="${kept.id}"].selected`).count(), 1, 'the link finds its message by id');
    await view.page.locator('.cp-chip[data-block="0"]').click();
    assert.equal(await view.page.locator('.cp-preview .pv-show').getAttribute('disabled'), '');
    await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: { ...stale, version: snap.split.version } } });
    await view.page.locator('.cp-chip[data-block="0"]').click();
    assert.equal(await view.page.locator('.cp-preview .pv-show').getAttribute('disabled'), null);
  });

  it('a block being regenerated is not counted ready, though it keeps its old summary until the new one', async () => {
    const blocks = c.blocks.map((b, i) => ({
      ...b,
      status: i === 1 ? ('queued' as const) : ('done' as const),
      summary: `s${i}`,
      stats: stats(i),
    }));
    await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: { ...c, state: 'running', blocks } } });
    assert.equal(await view.page.locator('.ov-status').textContent(), ` · compaction 2/${blocks.length}`);
  });

  it('the projection says how much it compacts, and its block count is approximate while the planner picks the size', async () => {
    const meter = view.page.getByRole('meter', { name: 'Projected after compaction' });
    for (const [blockTokens, about] of [
      [0, 'about '],
      [4096, ''],
    ] as const) {
      await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: null, split: { ...snap.split, blockTokens } } });
      assert.match(
        (await meter.getAttribute('aria-valuetext'))!,
        new RegExp(`after compacting [\\d.,K]+ tokens before message ${snap.split.tailStartIndex} in ${about}\\d+ blocks?$`),
      );
    }
  });

  it('the session picker shows each session with its size and last use', async () => {
    const now = Date.now();
    const sessions = [
      {
        id: 's1',
        title: 'DB migration',
        createdAt: now - 86_400_000,
        messageCount: 80,
        lastUsedAt: now - 3 * 3_600_000,
        bytes: 180 * 1024,
      },
      {
        id: 's0',
        title: 'Older session',
        createdAt: now - 9 * 86_400_000,
        messageCount: 1,
        lastUsedAt: now - 5 * 86_400_000,
        bytes: 2 * 1024 * 1024,
      },
    ];
    await view.send({ type: 'snapshot', snapshot: { ...snap, compaction: c, sessions, session: sessions[0]! } });
    const desc = await view.page
      .locator('.session-select vscode-option')
      .evaluateAll((els) => els.map((e) => e.getAttribute('description')));
    assert.deepEqual(desc, ['80 messages · 180 KB · used 3 h ago', '1 message · 2.0 MB · used 5 days ago']);
  });

  it("a cut tool output's header counts the output's own lines, not the lines of the copy shown", async () => {
    const k = snap.messages.map((m) => m.role).lastIndexOf('tool');
    assert.ok(k >= snap.messages.length - 40, 'fixture: a tool output among the 40 messages the chat shows');
    const shown = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const messages = snap.messages.map((m, i) => (i === k ? { ...m, content: shown, truncated: true, lines: 4000 } : m));
    await view.send({ type: 'snapshot', snapshot: { ...snap, messages, compaction: null } });
    const id = snap.messages[k]!.id;
    const header = view.page.locator(`.msg[data-id="${id}"] details.tool-result > summary`);
    assert.equal(await header.textContent(), 'Tool output · 4,000 lines, head and tail shown');
  });
});
