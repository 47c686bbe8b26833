import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction, predictWritten } from '../../src/core/compaction/plan';
import { buildWorkerPrompt } from '../../src/core/compaction/workerPrompt';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();

/** A session whose tool outputs are long enough (300 lines) for pre-trim's salience pass to run on them. */
async function snapshot(turns = 16) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
    const args = `{"path":"src/mod${t}.ts"}`;
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: args } }],
    });
    const lines = Array.from({ length: 300 }, (_, i) =>
      i === 150 ? `TypeError: parseHeader${t} is not a function` : `line ${i} of mod${t}`,
    );
    await store.append({ role: 'tool', tool_call_id: `c${t}`, content: lines.join('\n') });
    await store.append({ role: 'assistant', content: `Patched parseHeader${t} in src/mod${t}.ts.` });
  }
  return snapshotSession(store, new TokenLedger(counter), { strategy: 'token-fraction' }, [], {
    contextWindow: 200_000,
    replyReserve: 4096,
  });
}

const settings = {
  ...DEFAULT_COMPACTION_SETTINGS,
  contextWindow: 200_000,
  profile: UNIT_PROFILE,
  mode: 'parallel',
  layout: 'target-block',
} as const;

describe('target-block worker prompts: client work per compaction', () => {
  it('counts each block transcript once, and each context message once per compaction, not once per worker', async () => {
    const snap = await snapshot();
    const plan = planCompaction(snap, { ...settings, blockTokens: 2048 });
    assert.equal(plan.settings.layout, 'target-block');
    assert.ok(plan.blocks.length >= 4, `expected several blocks, got ${plan.blocks.length}`);
    const calls = new Map<string, number>();
    const count = (m: ChatMessage) => {
      calls.set(m.content ?? '', (calls.get(m.content ?? '') ?? 0) + 1);
      return counter.countMessage(m);
    };
    const prompts = plan.blocks.map((b) => buildWorkerPrompt(plan, b, undefined, count));
    for (const [k, p] of prompts.entries()) {
      assert.ok(p.request.messages[1]!.content!.includes(p.targetText), `block ${k}'s prompt carries its transcript`);
      assert.equal(calls.get(p.targetText), 1, `block ${k}'s transcript counted once`);
    }
    // Tool outputs of the context before later blocks: pre-trimmed and counted once for the whole plan.
    const toolTexts = snap.context.filter((m) => m.role === 'tool').map((m) => m.content);
    const counted = [...calls].filter(
      ([text]) => toolTexts.some((t) => text.startsWith(t.slice(0, 40))) && !prompts.some((p) => p.targetText === text),
    );
    assert.ok(counted.length > 0, 'context tool outputs are counted');
    for (const [text, n] of counted) assert.equal(n, 1, `counted ${n} times: ${text.slice(0, 40)}`);
  });

  it('planning a snapshot again (as predictWritten does after the run) reuses its head model: no second salience scan', async () => {
    const snap = await snapshot();
    const s = { ...settings, blockTokens: 2048 };
    const a = planCompaction(snap, s);
    const b = planCompaction(snap, s);
    // The partition is cached inside the head model: the same array means the same model.
    assert.equal(b.blocks, a.blocks);
    assert.equal(typeof predictWritten(a, a.workers.targets), 'number');
    // A different snapshot gets its own model.
    const other = planCompaction(await snapshot(), s);
    assert.notEqual(other.blocks, a.blocks);
    assert.deepEqual(other.blocks, a.blocks);
  });
});
