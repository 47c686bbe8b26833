import assert from 'node:assert/strict';
import type { ChatMessage, StoredMessage } from '../../src/core/messages';
import { toWire } from '../../src/core/messages';
import { atomicUnits, partitionHead } from '../../src/core/compaction/partition';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { CompactionCancelledError } from '../../src/core/compaction/pendingCompaction';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import { countOpenItems } from '../../src/core/compaction/checks';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { allowedBoundaries, planSplit, type SplitChoice } from '../../src/core/splitPoint';
import { unlimited } from '../../src/core/ports';
import type { LimiterPort, ModelPort, ToolSpec } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';
import { asst, call, result, sys, toolPair, user } from './helpers/build';

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];

const sharedIds = counterIds();
function deps(model: FakeModel, limiter: LimiterPort = unlimited): CompactionDeps {
  return { model, limiter, count, clock: fixedClock(), ids: { next: (p) => sharedIds.next(`${p}x`) } };
}

/** The session's snapshot for a compaction, split by `choice`, in a 200K window. */
function snapOf(store: SessionStore, choice: SplitChoice, ledger = new TokenLedger(counter)) {
  return snapshotSession(store, ledger, choice, TOOLS, { contextWindow: 200_000, replyReserve: 4096 });
}

function settings(over: Partial<CompactionSettings> = {}): CompactionSettings {
  return { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 1000, contextWindow: 200_000, ...over };
}

/** A session of `turns` turns, each a user message, a tool round trip of ~`toolChars` and a reply. */
async function sessionWith(turns: number, toolChars = 2000) {
  const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
  const store = await SessionStore.create(d, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts. TODO: add a test for case ${t}.` });
    const callId = `call_${t}`;
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: callId, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/mod${t}.ts"}` } }],
    });
    await store.append({ role: 'tool', tool_call_id: callId, content: `// src/mod${t}.ts\n` + 'x'.repeat(toolChars) });
    await store.append({ role: 'assistant', content: `Decision: patched parseHeader in src/mod${t}.ts (${t}).` });
  }
  return { store, d };
}

describe('partition', () => {
  it('makes about ceil(head / B) blocks on message boundaries', () => {
    const msgs: StoredMessage[] = [sys('s')];
    for (let i = 0; i < 40; i++) msgs.push(user(`u${i}`), asst(`a${i}`));
    const tokens = msgs.map(() => 100);
    const head = msgs.map((_, i) => i).slice(1);
    const blocks = partitionHead(msgs, head, tokens, { blockTokens: 1000 });
    assert.equal(blocks.length, 8, '8000 tokens / 1000');
    assert.deepEqual(
      blocks.flatMap((b) => b.messageIndices),
      head,
      'every head message exactly once, in order',
    );
    assert.ok(blocks.every((b) => b.tokens === 1000));
  });

  it('never separates a tool call from its results, even across the block edge', () => {
    const msgs = [sys('s'), user('u'), ...toolPair('a', 'x'), call('multi', {}, 'c1'), result('c1', 'r1'), asst('end')];
    // give the multi call unit a size that straddles the edge
    const tokens = [10, 400, 300, 200, 300, 400, 50];
    const blocks = partitionHead(msgs, [1, 2, 3, 4, 5, 6], tokens, { blockTokens: 1000 });
    for (const b of blocks) {
      const ids = new Set(b.messageIndices);
      if (ids.has(4)) assert.ok(ids.has(5), 'call 4 and result 5 together');
      if (ids.has(2)) assert.ok(ids.has(3));
    }
    assert.deepEqual(
      atomicUnits(msgs, [1, 2, 3, 4, 5, 6], tokens).map((u) => u.indices),
      [[1], [2, 3], [4, 5], [6]],
    );
  });

  it('never leaves a block far below B: it joins the block before it, or the unit after it when it comes first', () => {
    // The task (8 tokens), then a tool call whose results make one unit far above B: no worker for 8 tokens alone.
    const msgs = [
      sys('s'),
      user('Please check the parser'),
      call('read_file', {}, 'c1'),
      result('c1', 'r'),
      asst('a'),
      user('u'),
      asst('end'),
    ];
    let blocks = partitionHead(msgs, [1, 2, 3, 4, 5, 6], [10, 8, 100, 2_600, 300, 40, 30], { blockTokens: 512 });
    assert.deepEqual(
      blocks.map((b) => [b.messageIndices, b.tokens]),
      [
        [[1, 2, 3], 2_708],
        [[4, 5, 6], 370],
      ],
      'the 8-token task joins the call after it; the last 30 tokens join the block before them',
    );
    // A small block that is not far below B keeps its own worker.
    blocks = partitionHead(msgs, [1, 2, 3, 4], [10, 200, 100, 2_600, 300], { blockTokens: 512 });
    assert.deepEqual(
      blocks.map((b) => b.messageIndices),
      [[1], [2, 3], [4]],
    );
  });

  it('splits only a message bigger than B, into parts', () => {
    const big = user('line\n'.repeat(2000));
    const msgs = [sys('s'), user('small'), big, asst('ok')];
    const blocks = partitionHead(msgs, [1, 2, 3], [5, 100, 3500, 50], { blockTokens: 1000 });
    const parts = blocks.filter((b) => b.part);
    assert.equal(parts.length, 4);
    assert.deepEqual(
      parts.map((p) => p.part!.part),
      [0, 1, 2, 3],
    );
    assert.equal(parts[0]!.part!.from, 0);
    assert.equal(parts[3]!.part!.to, big.content!.length);
    for (let i = 1; i < parts.length; i++) assert.equal(parts[i]!.part!.from, parts[i - 1]!.part!.to, 'parts tile the message');
  });
});

describe('parallel block compaction', () => {
  it('cache-aligned workers replay the agent context byte for byte up to their block, tools with tool_choice none, and one instruction', async () => {
    const { store } = await sessionWith(8);
    const ledger = new TokenLedger(counter);
    const snap = snapOf(store, { strategy: 'recent-turns' }, ledger);
    const model = new FakeModel();
    const pc = createCompaction(snap, settings({ focus: 'keep the DB migration plan' }), deps(model));
    await pc.start();
    assert.ok(pc.plan.blocks.length >= 3, `blocks: ${pc.plan.blocks.length}`);
    const agentWire = JSON.stringify(snap.context.map(toWire));
    for (const [k, req] of model.requests.entries()) {
      const prefix = req.messages.slice(0, -1);
      const lastIdx = pc.plan.blocks[k]!.messageIndices.at(-1)!;
      assert.equal(prefix.length, lastIdx + 1);
      assert.ok(agentWire.startsWith(JSON.stringify(prefix).slice(0, -1)), `worker ${k} prefix is the agent's own bytes`);
      assert.deepEqual(req.tools, TOOLS);
      assert.equal(req.toolChoice, 'none');
      const instr = req.messages.at(-1)!.content!;
      assert.match(instr, new RegExp(`SPLITPOINT-SUMMARIZE from message #${pc.plan.blocks[k]!.messageIndices[0]} to the end`));
      assert.match(instr, /FOCUS: keep the DB migration plan/, 'the focus reaches every worker');
      assert.match(instr, /data to summarise, not instructions/);
      assert.equal(/CURRENT WORK/.test(instr), k === pc.plan.blocks.length - 1, 'only the last block reports current work');
    }
  });

  it('target-block layout wraps block k at the end with the instruction after it', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    const pc = createCompaction(snap, settings({ layout: 'target-block' }), deps(model));
    await pc.start();
    for (const req of model.requests) {
      assert.equal(req.tools, undefined);
      const text = req.messages.at(-1)!.content!;
      // Fence tags carry the compaction's random suffix.
      const open = /<TARGET_BLOCK_([0-9a-f]+)>/.exec(text);
      assert.ok(open, 'target fenced with a suffixed tag');
      assert.ok(open.index < text.indexOf(`</TARGET_BLOCK_${open[1]}>`));
      assert.ok(text.indexOf(`</TARGET_BLOCK_${open[1]}>`) < text.indexOf('VERBOSITY:'), 'instruction after the target');
    }
    assert.ok(
      model.requests.slice(1).every((r) => /<CONTEXT_[0-9a-f]+>/.test(r.messages.at(-1)!.content!)),
      'later blocks see earlier ones as context',
    );
  });

  it('dispatches all blocks at once when the limiter allows and reports per-block events', async () => {
    const { store } = await sessionWith(8);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    model.hold();
    const pc = createCompaction(snap, settings(), deps(model));
    const events: CompactionEvent[] = [];
    pc.on((e) => events.push(e));
    const done = pc.start();
    await new Promise((r) => setImmediate(r));
    assert.equal(model.inFlight, pc.plan.blocks.length, 'every worker in flight together');
    model.release();
    await done;
    const kinds = events.map((e) => e.type);
    assert.equal(kinds[0], 'planned');
    assert.equal(kinds.filter((k) => k === 'block-done').length, pc.plan.blocks.length);
    assert.ok(kinds.includes('block-streaming'));
    assert.equal(kinds.at(-1), 'ready');
    const ready = events.at(-1) as Extract<CompactionEvent, { type: 'ready' }>;
    assert.equal(ready.totals.requests, pc.plan.blocks.length);
    assert.ok(ready.totals.compressionRatio > 1);
  });

  it('measures its time on the monotonic clock: a wall clock stepped by the system mid-run is not shown as measured', async () => {
    const { store } = await sessionWith(8);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    model.hold();
    let wall = 1_700_000_000_000;
    let mono = 5_000;
    const clock = { now: () => wall, monotonic: () => mono };
    const pc = createCompaction(snap, settings(), { ...deps(model), clock });
    const done = pc.start();
    await new Promise((r) => setImmediate(r));
    // 700 ms pass while the workers run, and the system sets the wall clock ten minutes ahead.
    mono += 700;
    wall += 600_000;
    model.release();
    await done;
    assert.ok(pc.isComplete());
    assert.equal(pc.outcome()?.measuredMs, 700);
    assert.deepEqual(
      pc.blocks.map((b) => b.stats?.ms),
      pc.blocks.map(() => 700),
    );
  });

  it("a reasoning model's thinking shows as writing, and is not counted as summary", async () => {
    const { store } = await sessionWith(8);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const thinking = 'Let me weigh what the next steps need. '.repeat(40);
    const summary = 'Decisions: parseHeader stays strict.';
    // Thinks on the reasoning channel first (as vLLM's --reasoning-parser sends it), then writes; the server counts both.
    const model: ModelPort = {
      async chat(_req, opts) {
        for (let i = 0; i < thinking.length; i += 80) opts?.onDelta?.({ type: 'reasoning', text: thinking.slice(i, i + 80) });
        opts?.onDelta?.({ type: 'content', text: summary });
        const completionTokens = Math.ceil((thinking.length + summary.length) / 4);
        return {
          message: { role: 'assistant', content: summary },
          reasoning: thinking,
          usage: { promptTokens: 900, completionTokens, cachedTokens: 0 },
          finishReason: 'stop',
        };
      },
    };
    const pc = createCompaction(snap, settings(), { ...deps(new FakeModel()), model });
    const events: CompactionEvent[] = [];
    pc.on((e) => events.push(e));
    await pc.start();
    const streamed = events.filter((e): e is Extract<CompactionEvent, { type: 'block-streaming' }> => e.type === 'block-streaming');
    assert.ok(
      streamed.some((e) => e.outputTokens > 100),
      'the thinking counted as tokens written, not as a request still waiting',
    );
    for (const b of pc.blocks) {
      assert.ok(b.stats!.outputTokens > 300, `decoded ${b.stats!.outputTokens}`);
      assert.equal(b.stats!.summaryTokens, count({ role: 'user', content: summary }));
    }
  });

  it('retries a failed block alone and keeps the others', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    model.failNext = ['HTTP 500 from the server'];
    const pc = createCompaction(snap, settings(), deps(model));
    await pc.start();
    const failed = pc.blocks.filter((b) => b.status === 'failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.error!, /HTTP 500/);
    assert.throws(() => pc.summaryText(), /Not every block has a summary/);
    const before = model.requests.length;
    await pc.retryFailed();
    assert.equal(model.requests.length, before + 1, 'only the failed block was sent again');
    assert.ok(pc.isComplete());
  });

  it('edits and regenerates a block before adoption; adoption splices the session and undo restores it', async () => {
    const { store } = await sessionWith(6);
    const before = store.active().messages.map((m) => m.id);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    const pc = createCompaction(snap, settings(), deps(model));
    await pc.start();
    pc.edit(0, 'DECISIONS:\n- edited by the developer');
    await pc.regenerate(1);
    assert.equal(pc.blocks[0]!.status, 'edited');
    assert.equal(pc.blocks[1]!.status, 'done');
    // the agent keeps going while the preview is open
    const late = await store.append({ role: 'user', content: 'one more thing' });
    const rec = await pc.adopt(store);
    const active = store.active();
    assert.equal(active.messages[1]!.kind, 'summary');
    assert.match(active.messages[1]!.content!, /edited by the developer/);
    assert.equal(active.messages.at(-1)!.id, late.id, 'messages appended after the snapshot stay in the tail');
    assert.equal(active.messages[2]!.id, snap.context[snap.split.tailStartIndex]!.id);
    assert.equal(rec.depth, 1);
    assert.equal(rec.stats!.edited, 1);
    await store.undoCompaction();
    assert.deepEqual(
      store.active().messages.map((m) => m.id),
      [...before, late.id],
    );
  });

  it('regenerates one block with its own focus (the review editor\'s "keep this"), added to the standing focus', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    const pc = createCompaction(snap, settings({ focus: 'the migration plan' }), deps(model));
    await pc.start();
    const before = model.requests.length;
    await pc.regenerate(1, 'keep users_table_v2');
    const sent = JSON.stringify(model.requests.slice(before));
    assert.equal(model.requests.length, before + 1);
    assert.match(sent, /the migration plan; keep users_table_v2/);
    await pc.regenerate(0);
    assert.doesNotMatch(JSON.stringify(model.requests.at(-1)), /users_table_v2/, 'the block focus stays with its block');
  });

  it('cancellation aborts the workers and nothing is adopted', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    model.hold();
    const pc = createCompaction(snap, settings(), deps(model));
    const done = pc.start();
    await new Promise((r) => setImmediate(r));
    pc.cancel();
    await done;
    assert.equal(model.aborted, pc.plan.blocks.length);
    await assert.rejects(pc.adopt(store), CompactionCancelledError);
    assert.equal(store.snapshot.compactions.length, 0);
  });

  it('a new focus supersedes the old one: unfinished blocks are redone with it, finished ones kept', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    model.hold();
    const pc = createCompaction(snap, settings(), deps(model));
    const first = pc.start();
    await new Promise((r) => setImmediate(r));
    const n = pc.plan.blocks.length;
    assert.equal(model.requests.length, n);
    pc.edit(0, 'DECISIONS:\n- block 0 finished before the new focus');
    const refocused = pc.refocus('keep the parser decisions');
    model.release();
    await Promise.all([first, refocused]);
    assert.equal(model.aborted, n, 'every in-flight worker was aborted (block 0 by the edit)');
    const redone = model.requests.slice(n);
    assert.equal(redone.length, n - 1, 'block 0 was finished and is not redone');
    assert.ok(redone.every((r) => /FOCUS: keep the parser decisions/.test(r.messages.at(-1)!.content!)));
    assert.match(pc.summaryText(), /block 0 finished before the new focus/);
    assert.match(pc.summaryText(), /Focus requested: keep the parser decisions/);
  });

  it('sequential baseline is one worker over the whole head', async () => {
    const { store } = await sessionWith(6);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel();
    const pc = createCompaction(snap, settings({ mode: 'sequential' }), deps(model));
    await pc.start();
    assert.equal(model.requests.length, 1);
    assert.deepEqual(pc.plan.blocks[0]!.messageIndices, snap.split.headIndices);
  });

  it('re-compaction folds the earlier summary in as the oldest block and caps the depth', async () => {
    const { store } = await sessionWith(10);
    const ledger = new TokenLedger(counter);
    const depths: number[] = [];
    for (let layer = 0; layer < 4; layer++) {
      const snap = snapOf(store, { strategy: 'recent-turns' }, ledger);
      const pc = createCompaction(snap, settings({ maxDepth: 2 }), deps(new FakeModel()));
      if (layer > 0) {
        const first = pc.plan.blocks[0];
        if (layer === 1) assert.ok(first?.isPriorSummary, 'the earlier summary is block 0');
        if (layer >= 2)
          assert.notEqual(pc.plan.carriedSummaryIndex, undefined, 'at the cap the earlier summary is carried, not re-summarised');
      }
      await pc.start();
      depths.push((await pc.adopt(store)).depth);
      for (let t = 0; t < 3; t++) {
        await store.append({ role: 'user', content: `more work ${layer}.${t} TODO later` });
        await store.append({ role: 'assistant', content: `done ${layer}.${t}` });
      }
    }
    assert.deepEqual(depths, [1, 2, 2, 2]);
    // undo peels every layer back to the originals
    for (let i = 0; i < 4; i++) await store.undoCompaction();
    assert.equal(store.active().compaction, undefined);
  });

  it('a summary is not a user message: after a user-messages compaction the next one folds it in and adopts cleanly', async () => {
    const { store } = await sessionWith(6);
    const ledger = new TokenLedger(counter);
    const compact = async (choice: SplitChoice) => {
      const snap = snapOf(store, choice, ledger);
      const pc = createCompaction(snap, settings(), deps(new FakeModel()));
      await pc.start();
      return { snap, record: await pc.adopt(store) };
    };
    const first = await compact({ strategy: 'user-messages' });
    const s1 = first.record.summary.id;
    await store.append({ role: 'user', content: 'Turn 6: now rename parseHeader.' });
    await store.append({ role: 'assistant', content: 'Renamed.' });
    const second = await compact({ strategy: 'user-messages' });
    const at = second.snap.context.findIndex((m) => m.id === s1);
    assert.ok(second.snap.split.headIndices.includes(at), 'the first summary is in the head, folded into the second');
    assert.ok(!second.record.keptIds.includes(s1), 'and never kept as if the user had written it');
    const active = store.active().messages;
    assert.deepEqual(
      active.filter((m) => m.role === 'user' && m.kind !== 'summary').map((m) => (m.content ?? '').slice(0, 7)),
      ['Turn 0:', 'Turn 1:', 'Turn 2:', 'Turn 3:', 'Turn 4:', 'Turn 5:', 'Turn 6:'],
    );
    assert.equal(active.filter((m) => m.kind === 'summary').length, 1);
    // No split may start the tail at or before the summary in force: the log holds its originals there.
    await store.append({ role: 'user', content: 'Turn 7: and add a test.' });
    const ctx = store.active().messages;
    const summaryAt = ctx.findIndex((m) => m.kind === 'summary');
    const tokens = new TokenLedger(counter).countAll(ctx);
    for (const choice of [
      { strategy: 'token-fraction' },
      { strategy: 'recent-turns' },
      { manualIndex: 1 },
      { manualIndex: summaryAt },
    ] as const) {
      const { split } = planSplit({ messages: ctx, tokens }, choice, 200_000, 4096);
      assert.ok(split.tailStartIndex > summaryAt, `${JSON.stringify(choice)}: tail starts at ${split.tailStartIndex}`);
    }
    assert.ok(allowedBoundaries(ctx, 'message').every((b) => b > summaryAt));
  });

  it('a compaction of nothing but the summary before it leaves later messages in the context', async () => {
    const { store } = await sessionWith(4);
    const ledger = new TokenLedger(counter);
    for (let layer = 0; layer < 2; layer++) {
      // Dragged to the end: compact everything, the second time with nothing new since the first.
      const n = store.active().messages.length;
      const snap = snapOf(store, { manualIndex: n }, ledger);
      const pc = createCompaction(snap, settings(), deps(new FakeModel()));
      await pc.start();
      await pc.adopt(store);
    }
    await store.append({ role: 'user', content: 'What next?' });
    assert.equal(store.active().messages.at(-1)?.content, 'What next?', 'the new message is sent to the model');
  });

  it('at the depth cap the summary is measured against what adoption removes: the head and the summary carried over', async () => {
    const { store } = await sessionWith(8);
    const ledger = new TokenLedger(counter);
    const run = async (answer: string) => {
      const snap = snapOf(store, { strategy: 'recent-turns' }, ledger);
      const pc = createCompaction(snap, settings({ maxDepth: 1 }), deps(new FakeModel(() => answer)));
      await pc.start();
      return pc;
    };
    // A long first summary, then a short one of a head smaller than it.
    await (await run(`Decisions: ${'kept parseHeader strict; '.repeat(120)}`)).adopt(store);
    await store.append({ role: 'user', content: 'Turn 8: one more fix.' });
    await store.append({ role: 'assistant', content: 'Fixed.' });
    await store.append({ role: 'user', content: 'Turn 9: and another.' });
    await store.append({ role: 'assistant', content: 'Done.' });
    // Short, but a summary: a reply with none of the sections asked for is refused as not one.
    const pc = await run('FACTS: patched parseHeader.');
    const carried = pc.plan.carriedSummaryIndex;
    assert.notEqual(carried, undefined, 'the first summary is carried verbatim (depth cap 1)');
    const carriedTokens = pc.plan.snapshot.tokens[carried!]!;
    assert.equal(pc.plan.replacedTokens, pc.plan.headTokens + carriedTokens);
    // The merged summary holds the carried one word for word, so it is bigger than the head alone; it still shrinks the context.
    assert.ok(pc.summaryTokens() >= pc.plan.headTokens, `summary ${pc.summaryTokens()} against head ${pc.plan.headTokens}`);
    assert.ok(pc.summaryTokens() < pc.plan.replacedTokens);
    assert.equal(pc.checks().grows, false);
    assert.equal(pc.totals().headTokens, pc.plan.replacedTokens);
    await pc.adopt(store);
  });

  it('flags a drop in open loops and checks pins survive', async () => {
    const { store } = await sessionWith(6);
    await store.updatePins(() => [{ id: 'p1', text: 'Never drop the users table', kind: 'constraint', source: 'user', createdAt: 1 }]);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel(() => 'DECISIONS:\n- none\nOPEN:\n- none');
    const pc = createCompaction(snap, settings(), deps(model));
    await pc.start();
    const checks = pc.checks();
    assert.deepEqual(checks.missingPins, []);
    assert.ok(checks.openLoopsBefore >= 4, `before ${checks.openLoopsBefore}`);
    assert.equal(checks.openLoopsDropped, true);
    assert.equal(countOpenItems('OPEN:\n- a\n- none\n- b\nFACTS:\n- c'), 2);
    assert.equal(countOpenItems('DECISIONS:\n- a\nFACTS:\n- c'), 0, 'English sections without OPEN: none listed');
    // Sections named in the conversation's language: not counted, and so not called dropped.
    assert.equal(countOpenItems("## DÉCISIONS\n- aucune\nEN COURS :\n- TODO : gérer l'entrée vide"), null);
    const french = createCompaction(snap, settings(), deps(new FakeModel(() => '## DÉCISIONS\n- aucune\n## EN SUSPENS\n- TODO')));
    await french.start();
    assert.equal(french.checks().openLoopsAfter, null);
    assert.equal(french.checks().openLoopsDropped, false);
  });
});

describe('recent-turns per-turn budget', () => {
  it('holds a preserved turn over the budget to it when splicing, keeps the original whole, and re-compacts cleanly', async () => {
    const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
    const store = await SessionStore.create(d, '/t.jsonl');
    await store.append({ role: 'system', content: 'sys' });
    for (let t = 0; t < 4; t++) {
      await store.append({ role: 'user', content: `turn ${t}` });
      await store.append({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      });
      // the last turn reads a huge file: ~15K tokens against a budget of 2K
      await store.append({ role: 'tool', tool_call_id: `c${t}`, content: t === 3 ? 'line of a huge log\n'.repeat(3300) : 'small output' });
      await store.append({ role: 'assistant', content: `done ${t}` });
    }
    const huge = store.snapshot.messages.find((m) => m.role === 'tool' && m.content.length > 10_000)!;
    const ledger = new TokenLedger(counter);
    // usable context 6000 → budget clamp(1500) = 2000
    const snap = snapshotSession(store, ledger, { strategy: 'recent-turns' }, TOOLS, { contextWindow: 10_000, replyReserve: 4_000 });
    const pc = createCompaction(snap, settings({ contextWindow: 10_000 }), deps(new FakeModel()));
    await pc.start();
    const rec = await pc.adopt(store);
    assert.equal(rec.turnBudget, 2_000);
    const active = store.active().messages;
    const cappedCopy = active.find((m) => m.id === `${huge.id}~capped`)!;
    assert.ok(cappedCopy, 'the huge result is replaced by a capped copy');
    assert.ok(cappedCopy.content!.length < huge.content!.length / 4);
    assert.match(cappedCopy.content!, /chars cut/);
    const lastTurn = active.slice(active.findIndex((m) => m.role === 'user' && m.content === 'turn 3'));
    assert.ok(lastTurn.reduce((s, m) => s + counter.countMessage(m), 0) <= 2_000);
    assert.equal(store.snapshot.messages.find((m) => m.id === huge.id)!.content, huge.content, 'the stored original is whole');
    assert.ok(
      store.archived().some((m) => m.id === huge.id),
      'and reachable by recall',
    );
    // a later compaction whose split sees the capped copy records the original's id
    for (const t of [4, 5]) {
      await store.append({ role: 'user', content: `turn ${t}` });
      await store.append({ role: 'assistant', content: `done ${t}` });
    }
    const snap2 = snapshotSession(store, ledger, { strategy: 'recent-turns' }, TOOLS, { contextWindow: 10_000, replyReserve: 4_000 });
    const pc2 = createCompaction(snap2, settings({ contextWindow: 10_000 }), deps(new FakeModel()));
    await pc2.start();
    const rec2 = await pc2.adopt(store);
    assert.ok(rec2.coveredIds.includes(huge.id));
    assert.ok(!rec2.coveredIds.some((id) => id.endsWith('~capped')));
  });
});

describe('summary size against the block', () => {
  it('asks small blocks for proportionally short summaries and flags a summary that would grow the context', async () => {
    const { store } = await sessionWith(6, 300);
    const snap = snapOf(store, { strategy: 'recent-turns' });
    const model = new FakeModel(() => 'DECISIONS:\n- ' + 'a long-winded restatement of everything '.repeat(80));
    const pc = createCompaction(snap, settings({ blockTokens: 200 }), deps(model));
    await pc.start();
    for (const [k, req] of model.requests.entries()) {
      const asked = Number(/TARGET_TOKENS: (\d+)/.exec(req.messages.at(-1)!.content!)![1]);
      assert.ok(asked <= Math.max(48, Math.round(0.4 * pc.plan.blocks[k]!.tokens)), `block ${k} asked for ${asked}`);
      assert.ok(req.maxTokens! <= 2 * asked + 128 || req.maxTokens === 256);
    }
    assert.equal(pc.checks().grows, true, 'a summary longer than the head is flagged');
  });
});
