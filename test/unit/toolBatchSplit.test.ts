import assert from 'node:assert/strict';
import type { ChatMessage, StoredMessage, ToolCall } from '../../src/core/messages';
import { toWire } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { projectedContext } from '../../src/core/compaction/compactionOutput';
import { searchArchive } from '../../src/core/agent/recall';
import { inspectSession } from '../../src/core/inspect';
import { SessionStore } from '../../src/core/session/sessionStore';
import { orphanResultIndices } from '../../src/core/session/sessionState';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited, type ToolSpec } from '../../src/core/ports';
import { STRATEGY_NAMES, openToolBatchStart, planSplit, splitManual, type SplitChoice, type SplitResult } from '../../src/core/splitPoint';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';
import { asst, result, sys, user } from './helpers/build';
import { applySplitChange, type SplitView } from '../../src/protocol/messages';
import { splitChange } from '../../src/host/sessionSnapshot';

const counter = new CharEstimateCounter();
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const WINDOW = 200_000;
const RESERVE = 4096;

let n = 0;
function batch(...ids: string[]): StoredMessage {
  const calls: ToolCall[] = ids.map((id) => ({ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"${id}.ts"}` } }));
  return { role: 'assistant', content: null, tool_calls: calls, id: `batch${++n}`, timestamp: 1_700_000_000_000 + n, kind: 'normal' };
}

/** Eight finished turns, then a turn whose parallel batch has call_A answered and call_B still waiting for approval. */
function midBatch(): { messages: StoredMessage[]; open: number } {
  const messages: StoredMessage[] = [sys('You are a coding agent.')];
  for (let t = 0; t < 8; t++) messages.push(user(`Turn ${t}: fix bug ${t}.`), asst(`Patched bug ${t}.`));
  messages.push(user('Read a.ts and b.ts.'));
  const open = messages.length;
  messages.push(batch('call_A', 'call_B'), result('call_A', 'contents of a.ts'));
  return { messages, open };
}

const flat = (messages: readonly unknown[]): number[] => messages.map(() => 100);

function assertBatchInTail(split: SplitResult, open: number, label: string): void {
  assert.ok(
    split.headIndices.every((i) => i < open),
    `${label}: the open batch is not summarised (head ${split.headIndices.join(',')})`,
  );
  assert.ok(
    split.keptIndices.every((i) => i < open),
    `${label}: nothing kept from the batch on`,
  );
  assert.ok(split.tailStartIndex <= open, `${label}: the tail starts at the call at the latest (${split.tailStartIndex} > ${open})`);
}

/** Every tool message follows (through its run of results) the assistant message that made its call. */
function assertResultsFollowCalls(wire: readonly ChatMessage[]): void {
  let calls = new Set<string>();
  wire.forEach((m, i) => {
    if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id), `tool message ${i} (${m.tool_call_id}) follows its call`);
    else calls = new Set(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []);
  });
}

describe('a split taken inside a tool batch', () => {
  it('finds the batch only while a call is unanswered; an error result answers its call', () => {
    const { messages, open } = midBatch();
    assert.equal(openToolBatchStart(messages), open);
    assert.equal(openToolBatchStart(messages.slice(0, open + 1)), open, 'no result in yet');
    assert.equal(openToolBatchStart([...messages, result('call_B', 'Error: the user declined this call.')]), undefined);
    assert.equal(openToolBatchStart([...messages, result('call_X', 'a result of another call')]), open, 'a stray result answers nothing');
    assert.equal(openToolBatchStart([...messages, result('call_B', 'b'), asst('done')]), undefined);
    assert.equal(openToolBatchStart([sys('s'), user('u')]), undefined);
  });

  for (const strategy of STRATEGY_NAMES) {
    it(`${strategy} keeps the batch's call in the tail`, () => {
      const { messages, open } = midBatch();
      const { split } = planSplit({ messages, tokens: flat(messages) }, { strategy }, WINDOW, RESERVE);
      assertBatchInTail(split, open, strategy);
    });
  }

  it('recent-turns with no user turn at all keeps the batch in the tail', () => {
    const messages = [sys('s'), asst('Starting on my own.'), batch('call_A', 'call_B'), result('call_A', 'a')];
    const { split } = planSplit({ messages, tokens: flat(messages) }, { strategy: 'recent-turns' }, WINDOW, RESERVE);
    assertBatchInTail(split, 2, 'recent-turns');
    assert.deepEqual(split.headIndices, [1]);
  });

  it('a manual split at the end (or inside the batch) stops before the call', () => {
    const { messages, open } = midBatch();
    for (const at of [messages.length, open + 1]) {
      const { split } = planSplit({ messages, tokens: flat(messages) }, { manualIndex: at }, WINDOW, RESERVE);
      assertBatchInTail(split, open, `manual at ${at}`);
      assert.equal(split.tailStartIndex, open);
    }
    assertBatchInTail(splitManual(messages, messages.length, 'message'), open, 'splitManual');
  });

  it('what inspect reports for each strategy agrees', () => {
    const { messages, open } = midBatch();
    const report = inspectSession(messages, new TokenLedger(counter), { contextWindow: WINDOW, replyReserve: RESERVE });
    for (const strategy of STRATEGY_NAMES) assertBatchInTail(report.strategies[strategy], open, `inspect ${strategy}`);
  });

  it('a batch with every result in (one of them an error) may be summarised', () => {
    const { messages, open } = midBatch();
    messages.push(result('call_B', 'Error: the user declined this call.'));
    const { split } = planSplit({ messages, tokens: flat(messages) }, { strategy: 'user-messages' }, WINDOW, RESERVE);
    assert.ok(split.headIndices.includes(open));
    assert.equal(split.tailStartIndex, 1, 'the first kept user message, as before');
  });
});

describe('tool results whose call is not in the context', () => {
  it('are found wherever the run of results does not follow their call', () => {
    const msgs: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'summary' },
      { role: 'tool', tool_call_id: 'b', content: 'orphan after a summary' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
      { role: 'tool', tool_call_id: 'd', content: 'not this batch' },
      { role: 'user', content: 'u' },
      { role: 'tool', tool_call_id: 'c', content: 'after the user went on' },
    ];
    assert.deepEqual(orphanResultIndices(msgs), [2, 5, 7]);
  });
});

async function newStore(): Promise<SessionStore> {
  return SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
}

const sharedIds = counterIds();
function deps(): CompactionDeps {
  return {
    model: new FakeModel(),
    limiter: unlimited,
    count: (m) => counter.countMessage(m),
    clock: fixedClock(),
    ids: { next: (p) => sharedIds.next(`${p}tb`) },
  };
}

/** A session stopped inside a batch: call_A answered, call_B waiting for the user's approval. */
async function storeMidBatch(): Promise<SessionStore> {
  const store = await newStore();
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < 8; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
    await store.append({ role: 'assistant', content: `Patched bug ${t} in src/mod${t}.ts. ${'Details. '.repeat(60)}` });
  }
  await store.append({ role: 'user', content: 'Read a.ts, then delete b.ts.' });
  const calls: ToolCall[] = [
    { id: 'call_A', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
    { id: 'call_B', type: 'function', function: { name: 'run_command', arguments: '{"command":"rm b.ts"}' } },
  ];
  await store.append({ role: 'assistant', content: null, tool_calls: calls });
  await store.append({ role: 'tool', tool_call_id: 'call_A', content: 'contents of a.ts' });
  return store;
}

describe('a compaction planned mid-batch, adopted after the missing result came in', () => {
  const choices: [string, SplitChoice][] = [
    ...STRATEGY_NAMES.map((s): [string, SplitChoice] => [s, { strategy: s }]),
    ['manual split at the end', { manualIndex: Number.MAX_SAFE_INTEGER }],
  ];
  for (const [label, choice] of choices) {
    it(`${label}: every tool message the model is sent follows its call`, async () => {
      const store = await storeMidBatch();
      const snap = snapshotSession(store, new TokenLedger(counter), choice, TOOLS, { contextWindow: WINDOW, replyReserve: RESERVE });
      const pc = createCompaction(snap, { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: WINDOW }, deps());
      await pc.start();
      assertResultsFollowCalls(pc.projectedContext());
      const late = await store.append({ role: 'tool', tool_call_id: 'call_B', content: 'b.ts deleted' });
      await pc.adopt(store);
      const active = store.active();
      assert.ok(active.compaction, 'adopted');
      const wire = active.messages.map(toWire);
      assertResultsFollowCalls(wire);
      assert.ok(
        active.messages.some((m) => m.id === late.id),
        'the late result is sent, after its call',
      );
      assert.deepEqual(
        wire.slice(-3).map((m) => m.role),
        ['assistant', 'tool', 'tool'],
      );
    });
  }
});

describe('the safety net: a result whose call was summarised anyway', () => {
  it('is not sent, stays in the log, and recall finds it', async () => {
    const store = await storeMidBatch();
    const log = store.snapshot.messages;
    const callAt = log.findIndex((m) => m.role === 'assistant' && m.tool_calls?.length);
    // A record as the defect wrote it: the head runs to the end of the snapshot, taking in the open batch.
    await store.adoptCompaction({
      summary: { role: 'user', content: 'Summary of the work so far.', id: 'sum1', timestamp: 1, kind: 'summary' },
      tailStartId: null,
      keptIds: [],
      coveredIds: log.slice(1).map((m) => m.id),
      lastSnapshotId: log.at(-1)!.id,
      strategy: 'user-messages',
      depth: 1,
    });
    const late = await store.append({ role: 'tool', tool_call_id: 'call_B', content: 'b.ts deleted: zebra-marker' });
    const wire = store.active().messages.map(toWire);
    assertResultsFollowCalls(wire);
    assert.ok(!store.active().messages.some((m) => m.id === late.id), 'not sent');
    assert.equal(store.snapshot.messages.at(-1)!.id, late.id, 'still in the log');
    assert.ok(store.snapshot.messages[callAt]!.role === 'assistant');
    assert.deepEqual(
      searchArchive(store.archived(), 'zebra-marker').map((h) => h.messageId),
      [late.id],
    );
  });

  it('a projected context leaves out a result whose call is in the head', () => {
    const { messages, open } = midBatch();
    const tokens = flat(messages);
    const split: SplitResult = {
      strategy: 'manual',
      tailStartIndex: open + 1,
      keptIndices: [],
      headIndices: messages.map((_, i) => i).slice(1, open + 1),
      note: 'a split no strategy makes: the tail opens with a result',
    };
    const plan = planCompaction(
      { context: messages, tokens, split, priorDepth: 0, tools: TOOLS, strategy: 'manual', pins: [] },
      { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: WINDOW },
    );
    const projected = projectedContext(plan, 'summary');
    assertResultsFollowCalls(projected);
    assert.deepEqual(
      projected.map((m) => m.role),
      ['system', 'user'],
    );
  });
});

describe('the split handle and a tool batch awaiting results', () => {
  it('may not go past the batch, and the per-message changes rebuild the list a snapshot has as the batch opens and closes', () => {
    const { messages } = midBatch();
    const open = openToolBatchStart(messages)!;
    const plan = (ms: readonly StoredMessage[]) =>
      planSplit({ messages: ms, tokens: flat(ms) }, { strategy: 'token-fraction' }, WINDOW, RESERVE);
    assert.ok(
      plan(messages).allowed.every((a) => a <= open),
      `allowed ${plan(messages).allowed.join(',')} past the call at ${open}`,
    );
    // The session as it grows: the batch opens, its first result comes, the second, then the answer.
    const full = [...messages, result('call_B', 'approved and run'), asst('Both read.')];
    const view = (ms: readonly StoredMessage[]) => ({ ...viewOf(plan(ms).allowed) });
    let held = view(full.slice(0, open));
    for (let n = open + 1; n <= full.length; n++) {
      const ms = full.slice(0, n);
      held = applySplitChange(held, splitChange(ms, view(ms)));
      assert.deepEqual(held.allowed, plan(ms).allowed, `after message ${n - 1} (${ms[n - 1]!.role})`);
    }
    assert.equal(held.allowed.at(-1), full.length, 'once answered, everything may be compacted again');
  });
});

/** A SplitView around an allowed list: the rest of its fields do not take part in the change. */
function viewOf(allowed: number[]): SplitView {
  return {
    strategy: 'token-fraction',
    tailStartIndex: 0,
    keptIndices: [],
    allowed,
    headEnd: 0,
    frameEnd: 1,
    version: 'v',
    compression: 12,
    carriedIndex: null,
    blockTokens: 0,
  };
}
