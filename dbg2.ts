import { plantSession } from './src/core/fidelity/plant';
import { DEFAULT_PRETRIM } from './src/core/pretrim';
if (process.env.PLAIN) DEFAULT_PRETRIM.salience = false;
import { headFacts, reachability } from './src/core/fidelity';
import { loadTiktokenCounter } from './src/core/tokens/tiktokenCounter';
import { planCompaction, DEFAULT_COMPACTION_SETTINGS } from './src/core/compaction/plan';
import { splitManual } from './src/core/splitPoint';
import { AGENT_TOOL_SPECS } from './src/core/agent/toolSpecs';
(async () => {
  const s = plantSession();
  const c = await loadTiktokenCounter();
  const tokens = s.messages.map((m) => c.countMessage(m));
  const snapshot = { context: s.messages, tokens, split: splitManual(s.messages, s.splitIndex, 'message'), priorDepth: 0, tools: AGENT_TOOL_SPECS, strategy: 'manual', pins: s.pins };
  for (const layout of ['cache-aligned', 'target-block'] as const) {
    const t0 = Date.now();
    const plan = planCompaction(snapshot, { ...DEFAULT_COMPACTION_SETTINGS, layout, contextWindow: 163840 });
    const facts = headFacts(plan);
    const r = reachability(plan, facts, (m) => c.countMessage(m));
    console.log(layout, plan.blocks.length, 'blocks', r.reached, '/', r.total, 'own', r.reachedOwnBlock, Date.now() - t0, 'ms', JSON.stringify(r.byPosition));
  }
})();
