/**
 * The eval's own numbers, checked: facts are planted, a model that keeps
 * exactly a chosen subset stands in for the summariser, and the eval must
 * report exactly that subset as kept and everything else as dropped.
 */
import assert from 'node:assert/strict';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import type { CompactionSnapshot } from '../../src/core/compaction/plan';
import { evaluate } from '../../src/core/fidelity/evaluate';
import { plantSession } from '../../src/core/fidelity/plant';
import type { PlantedFact } from '../../src/core/fidelity/plant';
import { hasOneAnswer, PROBE_MARKER } from '../../src/core/fidelity/probes';
import { messageText } from '../../src/core/messages';
import { unlimited } from '../../src/core/ports';
import { splitManual } from '../../src/core/splitPoint';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { answerProbe, detectProbe, PROBE_MARKER as SIM_PROBE_MARKER } from '../sim/probes';
import { FakeModel } from './helpers/fakeModel';

const counter = new CharEstimateCounter();

function setup() {
  const g = plantSession({ seed: 7, headTokens: 24_000, factsPerKind: 30, turns: 12, countTokens: (t) => counter.countText(t) });
  const snapshot: CompactionSnapshot = {
    context: g.messages,
    tokens: g.messages.map((m) => counter.countMessage(m)),
    split: splitManual(g.messages, g.splitIndex, 'message'),
    priorDepth: 0,
    tools: [],
    strategy: 'manual',
    pins: g.pins,
  };
  return { g, snapshot };
}

/** The model keeps exactly the chosen facts: it writes the line of every chosen fact its request shows. */
function controlledModel(chosen: readonly PlantedFact[]): FakeModel {
  return new FakeModel((req) => {
    const last = req.messages[req.messages.length - 1]!;
    if (messageText(last).startsWith(PROBE_MARKER)) {
      const p = detectProbe(req.messages as never)!;
      return answerProbe(p.probe, p.context);
    }
    const text = req.messages.map(messageText).join('\n');
    return ['FACTS:', ...chosen.filter((f) => text.includes(f.line.trim())).map((f) => `- ${f.line.trim()}`)].join('\n');
  });
}

describe('fidelity: the eval reports exactly what the summariser kept', () => {
  it('kept, dropped, per kind and probe outcomes match the controlled summaries, at defaults and in every series', async () => {
    const { g, snapshot } = setup();
    assert.equal(SIM_PROBE_MARKER, PROBE_MARKER, 'the simulator answers the probes the engine asks');
    const chosen = g.planted.filter((_, i) => i % 3 === 0);
    const keptKeys = new Set(chosen.map((f) => f.key));
    const model = controlledModel(chosen);
    const r = await evaluate(
      snapshot,
      { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 131_072, streamWorkers: false },
      { model, limiter: unlimited, count: (m) => counter.countMessage(m), clock: { now: () => 0 }, ids: { next: (p) => `${p}1` } },
      {
        layouts: ['cache-aligned', 'target-block'],
        volumes: ['planner'],
        blockSizes: [1024, 4096],
        verbosities: ['concise'],
        seriesLayout: 'target-block',
        stabilityBlockSizes: [],
        probes: 16,
      },
    );
    const plantedKeys = new Set(g.planted.map((f) => f.key));
    for (const run of [...r.defaults, ...r.byBlockSize.flat(), ...r.byVerbosity]) {
      assert.equal(run.reach.reached, run.reach.total, 'every planted fact reaches its worker');
      // Every fact the eval found is a planted key (or a pin), so its kept count is fixed by the chosen set.
      assert.equal(run.survival.total, r.head.facts - r.head.factsByKind.pin!);
      const byKind = Object.fromEntries(Object.entries(run.survival.byKind).map(([k, t]) => [k, t!.reached]));
      const want: Record<string, number> = {};
      for (const f of chosen) want[f.kind] = (want[f.kind] ?? 0) + 1;
      // Error, decision, constraint and instruction keys are identifiers too: each kept one is also a kept identifier.
      want.identifier = chosen.filter((f) => ['identifier', 'error', 'decision', 'constraint', 'instruction'].includes(f.kind)).length;
      assert.deepEqual(
        byKind,
        { ...Object.fromEntries(Object.keys(byKind).map((k) => [k, 0])), ...want },
        `${run.layout} B=${run.blockTokens}`,
      );
      assert.deepEqual(run.pins, { total: g.pins.length, kept: g.pins.length }, 'pins survive through the pinned block');
    }
    assert.ok(
      [...new Set(r.loss.facts.map((f) => f.key))].every((k) => plantedKeys.has(k) && !keptKeys.has(k)),
      'only unchosen facts are dropped',
    );
    const droppedKeys = new Set(r.loss.facts.map((f) => f.key));
    assert.equal(droppedKeys.size, plantedKeys.size - keptKeys.size, 'every unchosen planted fact is reported dropped');
    assert.ok(r.loss.facts.every((f) => f.cause === 'model' && g.messages.some((m) => m.id === f.messageId)));
    assert.ok(r.probes.asked >= 8);
    for (const o of r.probes.outcomes) {
      const key = o.factId.slice(o.factId.indexOf(':') + 1);
      assert.equal(o.full.correct, true, `${o.factId} with the full context: ${o.full.answer}`);
      assert.equal(o.compacted.correct, keptKeys.has(key), `${o.factId} compacted: ${o.compacted.answer}`);
    }
    const right = r.probes.outcomes.filter((o) => keptKeys.has(o.factId.slice(o.factId.indexOf(':') + 1))).length;
    assert.equal(r.probes.compactedAccuracy, right / r.probes.asked);
    assert.equal(r.probes.difference, right / r.probes.asked - 1);
  });
});

describe('fidelity: probes ask only what the full context answers one way', () => {
  const fact = (kind: 'identifier' | 'test', key: string, text: string, status?: 'passed' | 'failed') => ({
    id: `${kind}:${key}`,
    kind,
    key,
    text,
    messageId: 'm1',
    messageIndex: 1,
    position: 'tool-output' as const,
    ...(status ? { status } : {}),
  });

  it('drops a cloze on a templated line and keeps one on a unique line', () => {
    const full = 'export const HeaderSchema = z.object({\nexport const ChunkSchema = z.object({\nthe pool uses retryBudgetMs for backoff';
    assert.equal(hasOneAnswer(fact('identifier', 'ChunkSchema', 'export const ChunkSchema = z.object({'), full), false);
    assert.equal(hasOneAnswer(fact('identifier', 'retryBudgetMs', 'the pool uses retryBudgetMs for backoff'), full), true);
  });

  it('drops a status question when the test both passed and failed', () => {
    const full = '  ✗ parses empty headers\n  ✓ parses empty headers\n  ✓ rejects duplicate keys';
    assert.equal(hasOneAnswer(fact('test', 'parses empty headers', '  ✗ parses empty headers', 'failed'), full), false);
    assert.equal(hasOneAnswer(fact('test', 'rejects duplicate keys', '  ✓ rejects duplicate keys', 'passed'), full), true);
  });
});
