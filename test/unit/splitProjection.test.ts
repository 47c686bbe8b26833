/**
 * The side bar projects a compaction from the split handle without asking the host: the head it counts must be the
 * head the core would compact, for the strategy's own split and for a handle moved by hand (a manual split).
 */
import assert from 'node:assert/strict';
import type { ChatMessage, StoredMessage } from '../../src/core/messages';
import { splitView } from '../../src/host/viewModel';
import { planSplit, type StrategyName } from '../../src/core/splitPoint';
import type { SplitView, ViewMessage } from '../../src/protocol/messages';
import { buildPrefix, project } from '../../webview/projection';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const msgs: [ChatMessage, number][] = [
  [{ role: 'system', content: 'You are a coding agent.' }, 100],
  [{ role: 'user', content: 'Fix the retry bug.' }, 10],
  [{ role: 'assistant', content: 'Reading the code…' }, 5000],
  [{ role: 'user', content: 'Also keep maxRetries at 5.' }, 10],
  [{ role: 'assistant', content: 'Patched.' }, 8000],
  [{ role: 'user', content: 'Run the tests.' }, 10],
  [{ role: 'assistant', content: 'All green.' }, 3000],
];
/** A session of these messages and token counts, as the core splits it and as the host sends it to the view. */
function session(list: readonly [ChatMessage, number][]) {
  const messages = list.map(([m]) => m);
  const tokens = list.map(([, t]) => t);
  const views: ViewMessage[] = list.map(([m], index) => ({
    id: `m${index}`,
    index,
    role: m.role,
    kind: 'normal',
    origin: 'tail',
    tokens: tokens[index]!,
    content: m.content ?? '',
    truncated: false,
  }));
  const stored: StoredMessage[] = messages.map((m, i) => ({ ...m, id: `m${i}`, timestamp: 0, kind: 'normal' }));
  return {
    views,
    gauge: { used: tokens.reduce((a, b) => a + b, 0), window: 131_072, hi: 0.75, lo: 0.3, block: 0.9 },
    /** The split as the host sends it (viewModel's splitView), over the fixed token counts. */
    view: (strategy: StrategyName): SplitView =>
      splitView(
        stored,
        { countAll: () => tokens },
        { strategy, window: 131_072, replyReserve: 4096, blockTokens: 4096, verbosity: 'detailed', version: () => 'v', lo: 0.3 },
      ),
    /** Tokens of the messages the core's split would summarise. */
    coreHead: (choice: Parameters<typeof planSplit>[1]): number =>
      planSplit({ messages, tokens }, choice, 131_072, 4096).split.headIndices.reduce((sum, i) => sum + tokens[i]!, 0),
  };
}

const main = session(msgs);
const { views, gauge, view } = main;
const sessions = {
  'a session ending in an agent reply': main,
  // Preserving user messages, its last message is kept: the head ends before it.
  'a session ending in a user message': session([...msgs, [{ role: 'user', content: 'Now update the changelog.' }, 12]]),
  // Nothing after the frame to summarise but a user message.
  'a session with an empty head': session([msgs[0]!, msgs[1]!]),
};

describe('webview projection: the head it counts is the core split', () => {
  for (const [name, { views: vs, gauge: g, view: split, coreHead }] of Object.entries(sessions))
    for (const strategy of ['user-messages', 'token-fraction', 'recent-turns'] as const) {
      it(`${name}, ${strategy}: at the strategy's own split, and at every position the handle can be moved to`, () => {
        const sv = split(strategy);
        const prefix = buildPrefix(vs, sv);
        const atChoice = project(prefix, g, sv, sv.tailStartIndex);
        assert.equal(atChoice.headTokens, coreHead({ strategy }), 'the strategy split');
        for (const t of sv.allowed.filter((a) => a !== sv.tailStartIndex)) {
          assert.equal(project(prefix, g, sv, t).headTokens, coreHead({ manualIndex: t }), `moved to ${t}`);
        }
      });
    }

  it('preserving user messages, the head is every agent message after the frame: 16,000 of the 16,030 tokens', () => {
    const split = view('user-messages');
    assert.deepEqual([split.tailStartIndex, split.keptIndices], [1, [1, 3, 5]]);
    const p = project(buildPrefix(views, split), gauge, split, split.tailStartIndex);
    assert.equal(p.headTokens, 16_000);
    assert.equal(p.blocks, 4);
  });

  // The summary the view projects is the volume the planner will ask for: the verbosity's compression of the head,
  // bounded so that the context lands at lo. Before, the view multiplied a guessed 700 tokens by its own block count.
  for (const [verbosity, lo] of [
    ['detailed', 0.4],
    ['concise', 0.4],
    ['very detailed', 0.4],
    ['detailed', 0.01],
  ] as const) {
    it(`projects the planner's summary volume (${verbosity}, context to land at ${lo * 100}% of the window)`, async () => {
      const window = 40_000;
      const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
      for (const [m] of msgs) await store.append(m);
      const counter = new CharEstimateCounter();
      const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'token-fraction' }, [], {
        contextWindow: window,
        replyReserve: 4096,
      });
      const plan = planCompaction(snap, {
        ...DEFAULT_COMPACTION_SETTINGS,
        contextWindow: window,
        verbosity,
        targetFraction: lo,
        profile: UNIT_PROFILE,
      });
      const sv = splitView(
        snap.context,
        { countAll: () => [...snap.tokens] },
        { strategy: 'token-fraction', window, replyReserve: 4096, blockTokens: 4096, verbosity, version: () => 'v', lo },
      );
      const vs = views.map((v, i) => ({ ...v, tokens: snap.tokens[i]! }));
      const used = snap.tokens.reduce((a, b) => a + b, 0);
      const p = project(buildPrefix(vs, sv), { ...gauge, used, window, lo }, sv, sv.tailStartIndex);
      assert.equal(p.headTokens, plan.headTokens);
      assert.equal(p.summaryTokens, plan.summaryTokens);
    });
  }
});

describe('webview projection: a summary at the depth cap', () => {
  it('is carried into the next summary verbatim, as the planner does: replaced but not compressed', async () => {
    const window = 131_072;
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
    const appended: StoredMessage[] = [];
    for (const [m] of msgs) appended.push(await store.append(m));
    // A third-layer summary of everything but the last turn, then two more turns after it.
    const summaryText = 'Summary of the work so far. '.repeat(400);
    await store.adoptCompaction({
      summary: { role: 'user', content: summaryText, id: 'sum3', timestamp: 0, kind: 'summary' },
      tailStartId: appended[5]!.id,
      keptIds: [],
      coveredIds: appended.slice(1, 5).map((m) => m.id),
      lastSnapshotId: appended[6]!.id,
      strategy: 'token-fraction',
      depth: DEFAULT_COMPACTION_SETTINGS.maxDepth,
    });
    // Long enough that the split's head holds more than the summary.
    for (const [m] of msgs.slice(1, 7)) await store.append({ ...m, content: `${m.content} `.repeat(m.role === 'user' ? 1 : 600) });
    const snap = snapshotSession(store, new TokenLedger(new CharEstimateCounter()), { strategy: 'token-fraction' }, [], {
      contextWindow: window,
      replyReserve: 4096,
    });
    const plan = planCompaction(snap, {
      ...DEFAULT_COMPACTION_SETTINGS,
      contextWindow: window,
      targetFraction: 0.3,
      profile: UNIT_PROFILE,
    });
    assert.notEqual(plan.carriedSummaryIndex, undefined, 'the planner carries the summary');
    assert.ok(plan.headTokens > 0, 'and compacts more than it');
    const carried = snap.tokens[plan.carriedSummaryIndex!]!;
    const sv = splitView(
      snap.context,
      { countAll: () => [...snap.tokens] },
      {
        strategy: 'token-fraction',
        window,
        replyReserve: 4096,
        blockTokens: 4096,
        verbosity: 'detailed',
        version: () => 'v',
        priorDepth: 3,
        lo: 0.3,
      },
    );
    assert.equal(sv.carriedIndex, plan.carriedSummaryIndex);
    const vs: ViewMessage[] = snap.context.map((m, i) => ({ ...views[0]!, id: m.id, index: i, tokens: snap.tokens[i]! }));
    const used = snap.tokens.reduce((a, b) => a + b, 0);
    const p = project(buildPrefix(vs, sv), { ...gauge, used, window, lo: 0.3 }, sv, sv.tailStartIndex);
    assert.equal(p.headTokens, plan.replacedTokens);
    assert.equal(p.summaryTokens, plan.summaryTokens + carried);
    assert.equal(p.projected, used - plan.headTokens + plan.summaryTokens);
    assert.equal(p.blocks, Math.ceil(plan.headTokens / 4096));
  });
});
