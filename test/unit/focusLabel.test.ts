/**
 * The merged summary names the developer's focus as requested, not as kept, and a focus that arrives after every
 * block is written redoes nothing, so it is neither claimed in the summary nor recorded as the compaction's focus.
 */
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited } from '../../src/core/ports';
import type { ToolSpec } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';
import type { AgentLoop } from '../../src/core/agent/agentLoop';
import { UserCompactions, type UserCompactionDeps } from '../../src/host/userCompactions';

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];

function deps(model: FakeModel): CompactionDeps {
  return { model, limiter: unlimited, count, clock: fixedClock(), ids: counterIds() };
}

function settings(over: Partial<CompactionSettings> = {}): CompactionSettings {
  return { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: 200_000, ...over };
}

async function compaction(over: Partial<CompactionSettings> = {}) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < 6; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts. TODO: add a test for case ${t}.` });
    await store.append({ role: 'assistant', content: `Patched parseHeader in src/mod${t}.ts: ${'x'.repeat(2000)}` });
  }
  const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, TOOLS, {
    contextWindow: 200_000,
    replyReserve: 4096,
  });
  const model = new FakeModel();
  const pc = createCompaction(snap, settings(over), deps(model));
  return { pc, model, store };
}

describe('the focus in a merged summary', () => {
  it('is labelled as requested, not as kept', async () => {
    const { pc } = await compaction({ focus: 'the port numbers' });
    await pc.start();
    assert.match(pc.summaryText(), /^Focus requested: the port numbers$/m);
    assert.doesNotMatch(pc.summaryText(), /Focus kept/);
    assert.equal(pc.toRecord().focus, 'the port numbers');
  });

  it('a refocus after every block is written redoes nothing and changes neither the summary nor the record', async () => {
    const { pc, model, store } = await compaction();
    await pc.start();
    assert.ok(pc.isComplete());
    const requests = model.requests.length;
    const before = pc.summaryText();
    await pc.refocus('keep the parser decisions');
    assert.equal(pc.refocusApplied, false, 'the caller can tell the user nothing was redone');
    assert.equal(model.requests.length, requests, 'no block was sent again');
    assert.equal(pc.summaryText(), before);
    assert.doesNotMatch(pc.summaryText(), /keep the parser decisions/);
    assert.equal(pc.currentFocus, undefined);
    const record = await pc.adopt(store);
    assert.equal(record.focus, undefined, 'the adopted record claims no focus the blocks were not written with');
  });

  it('a refocus while blocks run redoes them with it, and then the summary names it', async () => {
    const { pc, model } = await compaction({ focus: 'the old focus' });
    model.hold();
    const first = pc.start();
    await new Promise((r) => setImmediate(r));
    const refocused = pc.refocus('keep the parser decisions');
    assert.equal(pc.refocusApplied, true);
    model.release();
    await Promise.all([first, refocused]);
    assert.ok(pc.isComplete());
    assert.match(pc.summaryText(), /^Focus requested: keep the parser decisions$/m);
    assert.equal(pc.toRecord().focus, 'keep the parser decisions');
  });
});

describe('the notice for a focus given while a background compaction runs', () => {
  async function noticeFor(refocusApplied: boolean | undefined): Promise<string[]> {
    const notices: string[] = [];
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/f.jsonl');
    // The loop's side as UserCompactions reads it: a background run past its blocks (judging), or still running them.
    const loop = {
      noteUserActivity: () => undefined,
      backgroundCompaction: { outcome: undefined, heldForNextMessage: false, pending: { refocusApplied } },
      userCompact: async () => undefined,
    } as unknown as AgentLoop;
    const d = { store, loop: () => loop, notice: (_level: string, text: string) => notices.push(text) };
    await new UserCompactions(d as unknown as UserCompactionDeps).compact('keep the DB migration plan', null);
    return notices;
  }

  it('says the focus is used only when blocks are redone with it', async () => {
    assert.deepEqual(await noticeFor(true), ['The background compaction now uses your focus: "keep the DB migration plan".']);
    for (const applied of [false, undefined]) {
      const [text] = await noticeFor(applied);
      assert.match(text!, /had already summarised every block, so your focus did not change it/);
      assert.match(text!, /"keep the DB migration plan" is the standing focus for the next compaction/);
    }
  });
});
