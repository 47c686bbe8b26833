/**
 * A cache-aligned worker replays the agent's prefix, tool definitions included. A review's forced cache-aligned run
 * asked for 24,799 prompt + 7,969 reply tokens of a 32,768 window, counted locally without the tools: the server
 * counted 24,800 and refused every worker. The worker's budget now leaves the tools' share and a counting margin.
 */
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { buildWorkerPrompt, countingMargin } from '../../src/core/compaction/workerPrompt';
import type { ToolSpec } from '../../src/core/ports';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);
const WINDOW = 16_384;
// Twenty tools with long descriptions: about 3K tokens the template renders into every cache-aligned prompt.
const TOOLS: ToolSpec[] = Array.from({ length: 20 }, (_, i) => ({
  type: 'function',
  function: {
    name: `tool_${i}`,
    description: `Tool ${i}: ${'does a careful thing with the workspace. '.repeat(14)}`,
    parameters: { type: 'object' },
  },
}));

describe('cache-aligned worker prompts fit the window with the tools and a margin', () => {
  it("every worker's messages, tool definitions and max_tokens stay inside the window, less the counting margin", async () => {
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 40; t++) {
      await store.append({ role: 'user', content: `Turn ${t}: look at src/mod${t}.ts.` });
      await store.append({ role: 'assistant', content: `Read src/mod${t}.ts: ${'the parser keeps its state in a table. '.repeat(60)}` });
    }
    const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'token-fraction' }, TOOLS, {
      contextWindow: WINDOW,
      replyReserve: 2048,
    });
    const plan = planCompaction(snap, {
      ...DEFAULT_COMPACTION_SETTINGS,
      contextWindow: WINDOW,
      profile: UNIT_PROFILE,
      mode: 'parallel',
      layout: 'cache-aligned',
      blockTokens: 2048,
    });
    const tools = count({ role: 'system', content: JSON.stringify(TOOLS) });
    assert.ok(tools > 2000, `fixture: the tools take ${tools} tokens`);
    let trimmed = 0;
    for (const b of plan.blocks) {
      const p = buildWorkerPrompt(plan, b, undefined, count);
      assert.deepEqual(p.request.tools, TOOLS, 'the agent’s tools go along, for the prefix cache');
      const whole = p.request.messages.reduce((n, m) => n + count(m), 0) + tools + p.request.maxTokens!;
      assert.ok(whole <= WINDOW - countingMargin(WINDOW), `block ${b.index}: ${whole} of ${WINDOW}`);
      // The prompt's size counts the tools too: a retry of a cut reply takes its room from it (workerRun.ts).
      assert.ok(
        p.promptTokens >= whole - p.request.maxTokens! - 2,
        `block ${b.index}: prompt ${p.promptTokens}, sent ${whole - p.request.maxTokens!}`,
      );
      if (p.trimmed) trimmed++;
    }
    assert.ok(trimmed > 0, 'fixture: later workers had to trim their replay');
  });
});
