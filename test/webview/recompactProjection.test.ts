/**
 * Re-compacting: the planner keeps at least half of an earlier summary folded into the head (priorSummaryFloor), so
 * the split handle's "→ N after" must count that floor. A review found "split at #2 → 1,816 after" for a run that
 * wrote 5,274 summary tokens: the projection took the verbosity's volume of a head that was all earlier summary.
 * The engine's own plan (planCompaction, whose worker targets are splitVolume's parts) is the reference here.
 */
import assert from 'node:assert/strict';
import type { ChatMessage, StoredMessage } from '../../src/core/messages';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { splitVolume, volumeAt } from '../../src/core/perf/volume';
import { planSplit } from '../../src/core/splitPoint';
import { splitView } from '../../src/host/viewModel';
import type { ViewMessage, ViewSnapshot } from '../../src/protocol/messages';
import { expandOverview, openView, type View } from './harness';
import { makeSnapshot } from './snapshot';

const WINDOW = 32_768;
type Entry = [ChatMessage & { kind?: StoredMessage['kind'] }, number];
const system: Entry = [{ role: 'system', content: 'You are a coding agent.' }, 300];
const summary = (tokens: number): Entry => [{ role: 'user', kind: 'summary', content: 'DECISIONS:\n- none\nFACTS:\n- retries: 5' }, tokens];
const say = (role: 'user' | 'assistant', tokens: number): Entry => [{ role, content: `${role} ${tokens}` }, tokens];

/** The session as the engine plans it (one summary in force, depth 1) and as the host shows it to the view. */
function session(list: readonly Entry[], manualIndex?: number) {
  const context = list.map(([m], i) => ({ kind: 'normal', timestamp: 0, id: `m${i}`, ...m }) as StoredMessage);
  const tokens = list.map(([, t]) => t);
  const choice = manualIndex === undefined ? { strategy: 'token-fraction' as const } : { manualIndex };
  const { split } = planSplit({ messages: context, tokens }, choice, WINDOW, 4096);
  const plan = planCompaction(
    { context, tokens, split, priorDepth: 1, tools: [], strategy: 'token-fraction', pins: [] },
    { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: WINDOW, targetFraction: 0.4, profile: UNIT_PROFILE },
  );
  const sv = splitView(
    context,
    { countAll: () => tokens },
    {
      strategy: 'token-fraction',
      window: WINDOW,
      replyReserve: 4096,
      blockTokens: 0,
      verbosity: 'detailed',
      version: () => 'v',
      priorDepth: 1,
      lo: 0.4,
    },
  );
  const messages: ViewMessage[] = context.map((m, index) => ({
    id: m.id,
    index,
    role: m.role,
    kind: m.kind,
    origin: m.kind === 'summary' ? 'summary' : m.role === 'system' ? 'system' : 'tail',
    tokens: tokens[index]!,
    content: m.content ?? '',
    truncated: false,
  }));
  const used = tokens.reduce((a, b) => a + b, 0);
  const snapshot: ViewSnapshot = {
    ...makeSnapshot(10),
    messages,
    split: sv,
    gauge: { used, window: WINDOW, hi: 0.75, lo: 0.4, block: 0.95 },
    compaction: null,
  };
  const written = plan.workers.targets.reduce((a, b) => a + b, 0);
  return { snapshot, plan, used, written, after: used - plan.headTokens + written };
}

describe('webview: the projection of a re-compaction counts the earlier summary it folds in', function () {
  let view: View;
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: makeSnapshot(10) });
    await expandOverview(view);
  });
  after(async () => view?.close());

  const projected = async () => {
    const m = view.page.getByRole('meter', { name: 'Projected after compaction' });
    return { now: Number(await m.getAttribute('aria-valuenow')), text: (await m.getAttribute('aria-valuetext'))! };
  };
  const io = async () => (await view.page.getByRole('meter', { name: 'Head → summary tokens' }).getAttribute('aria-valuetext'))!;
  const line = async () => (await view.page.locator('.ov-summary').textContent())!;

  it('a head of a 1,332-token summary and 1,800 raw tokens: the projection is what the workers are asked to write', async () => {
    const s = session([
      system,
      summary(1332),
      say('assistant', 1800),
      say('user', 10),
      say('assistant', 700),
      say('user', 10),
      say('assistant', 200),
    ]);
    assert.deepEqual(s.snapshot.split.tailStartIndex, 3, 'fixture: the strategy splits after the raw message');
    assert.equal(s.plan.headTokens, 3132);
    // The summary's floor (666) and the new conversation's own volume (1,800 ÷ 12 = 150), against 261 from the
    // verbosity over the whole head.
    assert.equal(s.written, 816);
    assert.equal(
      splitVolume(s.plan.summaryTokens, [1332, 1800], [1332, 0]).reduce((a, b) => a + b, 0),
      s.written,
    );
    assert.ok(volumeAt(3132, 12, undefined) < 300);
    await view.send({ type: 'snapshot', snapshot: s.snapshot });
    const p = await projected();
    assert.ok(Math.abs(p.now - s.after) <= 2, `projected ${p.now}, the engine writes for ${s.after}`);
    assert.match(await io(), /^head 3,132 tokens, summary 816 tokens \(estimate\)$/);
    assert.match(await line(), new RegExp(`split at #3 → ${s.after.toLocaleString('en-US')} after`));
  });

  it('the reported case: at #2 the head is the earlier summary alone; it keeps half, in one block', async () => {
    const s = session([system, summary(10_548), say('user', 10)], 2);
    assert.deepEqual(s.plan.workers.targets, [5274]);
    await view.send({ type: 'snapshot', snapshot: s.snapshot });
    const p = await projected();
    assert.equal(p.now, s.after);
    assert.equal(s.after, 5584);
    // The earlier summary is never cut, so it is one block whatever size the planner picks; still said as an estimate.
    assert.match(p.text, /in about 1 block$/);
    assert.match(await line(), /split at #2 → 5,584 after/);
    // A message added after it (the split unchanged) extends the prefix in place: the floor must stay in it.
    const m = { id: 'late', index: 3, role: 'assistant' as const, kind: 'normal' as const, origin: 'tail' as const };
    const gauge = { ...s.snapshot.gauge, used: s.used + 40 };
    const split = { ...s.snapshot.split, allowed: [...s.snapshot.split.allowed, 4] };
    await view.send({ type: 'message-added', message: { ...m, tokens: 40, content: 'ok', truncated: false }, gauge, split });
    assert.equal((await projected()).now, s.after + 40, 'after a message is added');
  });

  it('a split whose kept messages alone pass the mark where the agent waits says so', async () => {
    const s = session([system, say('user', 10), say('assistant', 2000), say('user', 10), say('assistant', 40_000)], 3);
    await view.send({ type: 'snapshot', snapshot: s.snapshot });
    assert.match(await line(), /after \(still over the 95% the agent waits at: move the split later\)/);
    assert.equal(await view.page.locator('.ov-line.ov-full').count(), 1);
  });

  it('a head mostly of new conversation: the volume the verbosity asks for, as before', async () => {
    const raw: Entry[] = [];
    for (let i = 0; i < 3; i++) raw.push(say('user', 10), say('assistant', 6000));
    const s = session([system, summary(1332), ...raw, say('user', 10), say('assistant', 300)]);
    assert.equal(s.written, s.plan.summaryTokens, 'fixture: the floor is within the total');
    await view.send({ type: 'snapshot', snapshot: s.snapshot });
    assert.ok(Math.abs((await projected()).now - s.after) <= 2);
    assert.doesNotMatch(await line(), /still over/);
  });
});
