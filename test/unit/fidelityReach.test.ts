/**
 * Reachability at default settings on a generated 120K-token head with facts
 * planted where engines lose them: every fact must reach a worker, in both
 * layouts and in the planner's own choice.
 */
import assert from 'node:assert/strict';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import type { CompactionSnapshot } from '../../src/core/compaction/plan';
import { headFacts, reachability } from '../../src/core/fidelity';
import { plantSession } from '../../src/core/fidelity/plant';
import { DEFAULT_PRETRIM } from '../../src/core/pretrim';
import { splitManual } from '../../src/core/splitPoint';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import type { TokenCounter } from '../../src/core/tokens/tokenCounter';

describe('fidelity: reachability on a 120K-token head with planted facts', function () {
  this.timeout(60_000);
  let counter: TokenCounter;
  let snapshot: CompactionSnapshot;
  let planted: ReturnType<typeof plantSession>;
  before(async () => {
    counter = await loadTiktokenCounter();
    planted = plantSession({ countTokens: (t) => counter.countText(t) });
    snapshot = {
      context: planted.messages,
      tokens: planted.messages.map((m) => counter.countMessage(m)),
      split: splitManual(planted.messages, planted.splitIndex, 'message'),
      priorDepth: 0,
      tools: [],
      strategy: 'manual',
      pins: planted.pins,
    };
  });

  it('has a 120K-token head, at least 50 facts of each kind, a third of them inside long tool outputs', () => {
    const head = snapshot.split.headIndices.reduce((s, i) => s + snapshot.tokens[i]!, 0);
    assert.ok(head > 110_000 && head < 130_000, `${head} tokens`);
    const kinds = new Map<string, number>();
    for (const f of planted.planted) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
    assert.equal(kinds.size, 8);
    for (const [k, n] of kinds) assert.ok(n >= 50, `${k}: ${n}`);
    const inLong = planted.planted.filter((f) => f.spot === 'long-middle').length;
    assert.ok(inLong >= planted.planted.length / 3, `${inLong} of ${planted.planted.length}`);
    for (const spot of ['user', 'assistant', 'long-middle', 'consumed'])
      assert.ok(
        planted.planted.some((f) => f.spot === spot),
        spot,
      );
  });

  for (const layout of ['auto', 'cache-aligned', 'target-block'] as const) {
    it(`every planted fact reaches a worker at default settings (layout ${layout})`, () => {
      const plan = planCompaction(snapshot, { ...DEFAULT_COMPACTION_SETTINGS, layout, contextWindow: 262_144 });
      const facts = headFacts(plan);
      for (const p of planted.planted)
        assert.ok(
          facts.some((f) => f.kind === p.kind && f.key === p.key),
          `extracted ${p.kind} ${p.key}`,
        );
      const r = reachability(plan, facts, (m) => counter.countMessage(m));
      const missed = r.perFact.filter((f) => f.reachedBlocks.length === 0).map((f) => f.factId);
      assert.deepEqual(missed, [], `${plan.settings.layout}, B=${plan.settings.blockTokens}`);
      assert.equal(r.reached, r.total);
      assert.equal(r.reachedOwnBlock, r.total, 'each fact reaches the worker of its own block');
      assert.ok(r.byPosition['long-output-middle']!.total > 400);
    });
  }

  it('without salience the target-block layout loses every fact in the middle of long outputs (the check can fail)', () => {
    const saved = DEFAULT_PRETRIM.salience;
    DEFAULT_PRETRIM.salience = false;
    try {
      const plan = planCompaction(snapshot, { ...DEFAULT_COMPACTION_SETTINGS, layout: 'target-block', contextWindow: 262_144 });
      const r = reachability(plan, headFacts(plan), (m) => counter.countMessage(m));
      const mid = r.byPosition['long-output-middle']!;
      assert.equal(mid.reached, 0, JSON.stringify(mid));
      assert.ok(r.reached < r.total);
    } finally {
      DEFAULT_PRETRIM.salience = saved;
    }
  });
});
