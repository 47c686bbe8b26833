/**
 * `/compact "focus…"` steers what survives the cut of a long tool output, in the prompt a target-block worker is
 * sent and in the head model the planner counts. A review's focus named a line in the middle of an 800-line log and
 * the worker never saw it: the cut did not take the focus.
 */
import assert from 'node:assert/strict';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { buildWorkerPrompt } from '../../src/core/compaction/workerPrompt';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();
const NEEDLE = 'step 1500: processed quasar batch 7741';

async function plan(focus: string | undefined) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < 6; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: run the batch job.` });
    const call = { id: `c${t}`, type: 'function' as const, function: { name: 'run_command', arguments: '{"command":"./batch"}' } };
    await store.append({ role: 'assistant', content: null, tool_calls: [call] });
    // Three thousand alike lines: none outranks another without a focus.
    const lines = Array.from({ length: 3000 }, (_, i) => (t === 2 && i === 1500 ? NEEDLE : `step ${i}: processed item batch ${i * 7}`));
    await store.append({ role: 'tool', tool_call_id: `c${t}`, content: lines.join('\n') });
    await store.append({ role: 'assistant', content: `Batch ${t} ran.` });
  }
  for (let t = 0; t < 4; t++) {
    await store.append({ role: 'user', content: `Later turn ${t}.` });
    await store.append({ role: 'assistant', content: `Done ${t}.` });
  }
  const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, [], {
    contextWindow: 200_000,
    replyReserve: 4096,
  });
  const settings = {
    ...DEFAULT_COMPACTION_SETTINGS,
    contextWindow: 200_000,
    profile: UNIT_PROFILE,
    layout: 'target-block',
    mode: 'parallel',
    focus,
  };
  return planCompaction(snap, settings as typeof DEFAULT_COMPACTION_SETTINGS);
}

describe('a focus steers the cut of long tool outputs in the workers’ prompts', () => {
  const count = (m: Parameters<typeof counter.countMessage>[0]) => counter.countMessage(m);
  const sent = (p: Awaited<ReturnType<typeof plan>>, focus: string | undefined) =>
    p.blocks
      .map((b) =>
        buildWorkerPrompt(p, b, focus, count)
          .request.messages.map((m) => m.content ?? '')
          .join('\n'),
      )
      .join('\n');

  it('without a focus the line is cut like its neighbours', async () => {
    const p = await plan(undefined);
    assert.ok(!sent(p, undefined).includes(NEEDLE));
  });

  it('a focus that names it keeps it, in some worker’s prompt', async () => {
    const focus = 'what happened to the quasar batch';
    const p = await plan(focus);
    assert.ok(sent(p, focus).includes(NEEDLE));
  });
});
