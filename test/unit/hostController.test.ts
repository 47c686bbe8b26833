import assert from 'node:assert/strict';
import type { AgentTool } from '../../src/core/agent/tools';
import { defaultSettings } from '../../src/core/config/settings';
import type { ModelRequest } from '../../src/core/ports';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import type { StrategyName } from '../../src/core/splitPoint';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import type { HostToWebview } from '../../src/protocol/messages';
import { SessionController } from '../../src/host/sessionController';
import { lossWithFallback } from '../../src/host/review/reviewBridge';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

/** The agent's answers: a tool call when asked to "touch", plain text otherwise. */
function agentModel(): FakeModel {
  const m = new FakeModel();
  m.chat = async (req: ModelRequest) => {
    m.requests.push(req);
    const last = req.messages[req.messages.length - 1]!;
    if (last.role === 'user' && /touch/.test(last.content)) {
      return {
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"x.txt","content":"hi"}' } }],
        },
        usage: undefined,
        finishReason: 'tool_calls',
      };
    }
    return { message: { role: 'assistant', content: `ok: ${last.content?.slice(0, 20)}` }, usage: undefined, finishReason: 'stop' };
  };
  return m;
}

async function setup(
  opts: {
    history?: number;
    prepare?: (store: SessionStore) => Promise<void>;
    strategy?: StrategyName;
    correctWindow?: (w: number) => void;
    confirm?: (message: string, action: string) => Promise<boolean>;
  } = {},
) {
  const storage = new MemoryStorage();
  const ids = counterIds();
  const clock = fixedClock();
  const store = await SessionStore.create({ storage, ids, clock }, '/s/one.jsonl');
  await store.append({ role: 'system', content: 'You are a test agent.' });
  for (let i = 0; i < (opts.history ?? 0); i++) {
    await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
    await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
  }
  await opts.prepare?.(store);
  const posted: HostToWebview[] = [];
  const wrote: string[] = [];
  const writeTool: AgentTool = {
    spec: { type: 'function', function: { name: 'write_file' } },
    needsApproval: () => true,
    describe: (a) => `write ${String(a.path)}`,
    execute: async (a, ctx) => {
      const ok = c.broker.takeApproved(ctx.callId);
      if (!ok.approved) return { content: 'not approved', isError: true };
      wrote.push(String(a.path));
      return { content: 'written' };
    },
  };
  const agent = agentModel();
  const compactor = new FakeModel();
  const ledger = new TokenLedger(new CharEstimateCounter());
  const settings = {
    ...defaultSettings(),
    judge: { enabled: false, threshold: 7 },
    blockTokens: 256,
    ...(opts.strategy ? { strategy: opts.strategy } : {}),
  };
  const c: SessionController = new SessionController({
    store,
    ledger,
    env: {
      settings,
      contextWindow: 32_768,
      agent,
      compactor,
      compactorLimiter: unlimited,
      judge: compactor,
      ...(opts.correctWindow ? { correctWindow: opts.correctWindow } : {}),
    },
    ...controllerDefaults(store, { id: 'one', title: 'One' }),
    workspaceTools: () => [writeTool],
    approvalPreview: async (call) => ({ kind: 'ask', detail: { summary: call.summary, path: 'x.txt', diff: '+hi' } }),
    clock,
    ids,
    post: (m) => posted.push(m),
    ...(opts.confirm ? { confirm: opts.confirm } : {}),
  });
  return { c, store, posted, agent, compactor, wrote, ledger };
}

const lastSnapshot = (posted: HostToWebview[]) =>
  (posted.filter((m) => m.type === 'snapshot').pop() as Extract<HostToWebview, { type: 'snapshot' }>).snapshot;
const tick = () => new Promise((r) => setImmediate(r));

describe('host: session controller (fake model, memory storage)', () => {
  let ctl: SessionController | undefined;
  afterEach(async () => {
    await ctl?.dispose();
    ctl = undefined;
  });

  it("a context-length refusal's smaller window reaches the gauge, the status bar and the server connection", async () => {
    const corrected: number[] = [];
    const { c, posted, agent } = await setup({ history: 6, correctWindow: (w) => corrected.push(w) });
    ctl = c;
    const answer = agent.chat.bind(agent);
    let refused = false;
    agent.chat = async (req, o) => {
      if (!refused) {
        refused = true;
        // A settings change during the turn waits for its end, with the window it was read with.
        c.updateEnvironment({ ...c.environment });
        throw Object.assign(new Error("This model's maximum context length is 8000 tokens."), {
          kind: 'context-overflow',
          window: 8000,
          input: 9000,
        });
      }
      return answer(req, o);
    };
    await c.handle({ type: 'send', text: 'go on' });
    assert.deepEqual(corrected, [8000]);
    assert.equal(c.environment.contextWindow, 8000, 'what the status bar reads, after the settings change was applied');
    await c.handle({ type: 'ready' });
    assert.equal(lastSnapshot(posted).gauge.window, 8000);
    assert.ok(posted.some((m) => m.type === 'notice' && /context window is 8000 tokens, not 32768/.test(m.text)));
  });

  it('answers ready with a full snapshot of the session', async () => {
    const { c, posted } = await setup({ history: 2 });
    ctl = c;
    await c.handle({ type: 'ready' });
    const s = lastSnapshot(posted);
    assert.equal(s.messages.length, 5);
    assert.deepEqual(
      s.messages.map((m) => m.origin),
      ['system', 'tail', 'tail', 'tail', 'tail'],
    );
    assert.ok(s.gauge.used > 0 && s.gauge.window === 32_768);
    assert.equal(s.gauge.hi, (0.75 * (32_768 - 4096)) / 32_768, 'hi of the room the prompt has, drawn on the window');
    assert.equal(s.split.strategy, 'token-fraction');
    assert.ok(s.split.allowed.includes(s.split.tailStartIndex));
    assert.equal(s.compaction, null);
    assert.equal(s.agent.running, false);
    assert.equal(s.trusted, true);
  });

  it('shows the judge verdict stored in the log on the summary after reopening', async () => {
    const { c, posted } = await setup({
      history: 2,
      prepare: async (store) => {
        const [, u0, , u1] = store.snapshot.messages;
        await store.adoptCompaction({
          id: 'c_judged',
          summary: { role: 'user', content: 'Summary of question 0.', id: 'c_judged_summary', timestamp: 1, kind: 'summary' },
          tailStartId: u1!.id,
          keptIds: [],
          coveredIds: [u0!.id],
          lastSnapshotId: u1!.id,
          strategy: 'token-fraction',
          depth: 1,
        });
        const verdict = {
          kind: 'scored' as const,
          alignment: 8,
          nonContradiction: 9,
          overall: 8,
          diagnosis: 'keeps the answer',
          accepted: true,
        };
        await store.recordVerdict('c_judged', 2, verdict);
      },
    });
    ctl = c;
    await c.handle({ type: 'ready' });
    const summary = lastSnapshot(posted).messages.find((m) => m.origin === 'summary')!;
    assert.equal(summary.verdict?.overall, 8);
    assert.equal(summary.verdict?.attempt, 2);
  });

  it('runs a turn: running state, the user and assistant messages as deltas, then idle', async () => {
    const { c, posted } = await setup();
    ctl = c;
    await c.handle({ type: 'send', text: 'hello there' });
    const types = posted.map((m) => m.type);
    assert.deepEqual(types, ['agent-state', 'message-added', 'agent-waiting', 'message-added', 'agent-waiting', 'agent-state']);
    // While the request is out and no token has come, the view can say so (the server's queue, the prefill).
    const waits = posted.flatMap((m) => (m.type === 'agent-waiting' ? [m.waiting?.on ?? null] : []));
    assert.deepEqual(waits, ['model', null]);
    const added = posted.filter((m): m is Extract<HostToWebview, { type: 'message-added' }> => m.type === 'message-added');
    assert.deepEqual(
      added.map((m) => [m.message.role, m.message.index]),
      [
        ['user', 1],
        ['assistant', 2],
      ],
    );
    assert.equal(added[1]!.message.content, 'ok: hello there');
    assert.ok(added[1]!.gauge.used > added[0]!.gauge.used);
  });

  it('asks for approval in the view and runs the tool only after Approve', async () => {
    const { c, posted, wrote } = await setup();
    ctl = c;
    const turn = c.handle({ type: 'send', text: 'please touch x.txt' });
    for (let i = 0; i < 20 && !posted.some((m) => m.type === 'approval-requested'); i++) await tick();
    const req = posted.find((m) => m.type === 'approval-requested') as Extract<HostToWebview, { type: 'approval-requested' }>;
    assert.equal(req.approval.callId, 'call_1');
    assert.equal(req.approval.diff, '+hi');
    assert.deepEqual(wrote, []);
    await c.handle({ type: 'approve', callId: 'call_1' });
    await turn;
    assert.deepEqual(wrote, ['x.txt']);
    assert.ok(posted.some((m) => m.type === 'approval-resolved' && m.approved));
    // What the agent waited on: the model, then the user (the card asks; no wait line), the approved tool, the model.
    const waits = posted.flatMap((m) => (m.type === 'agent-waiting' ? [m.waiting ? `${m.waiting.on} ${m.waiting.detail}` : null] : []));
    assert.deepEqual(waits, ['model null', null, 'tool write_file', null, 'model null', null]);
  });

  it("joins the workers' streaming progress of one turn into one message, before the blocks' results", async () => {
    const { c, posted, compactor } = await setup({ history: 6 });
    ctl = c;
    // Each worker streams three batches of 25 tokens; batch k of every worker arrives in one turn (one promise).
    const gates = [0, 1, 2].map(() => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    let started = 0;
    compactor.chat = async (req, opts) => {
      compactor.requests.push(req);
      started++;
      for (const g of gates) {
        await g.promise;
        opts?.onDelta?.({ type: 'content', text: 'x'.repeat(100) });
      }
      return { message: { role: 'assistant', content: 'DECISIONS:\n- kept' }, usage: undefined, finishReason: 'stop' };
    };
    const run = c.handle({ type: 'send', text: '/compact' });
    const blocks = async () => {
      for (let i = 0; i < 200; i++) {
        const view = [...posted].reverse().find((m) => m.type === 'compaction' && m.compaction?.state === 'running');
        const n = view?.type === 'compaction' ? view.compaction!.blocks.length : 0;
        if (n > 0 && started === n) return n;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error(`workers started: ${started}`);
    };
    const n = await blocks();
    // The workers' requests going out are posted first, as one message of 0 tokens each (sent, nothing read yet).
    for (let i = 0; i < 200 && !posted.some((m) => m.type === 'block-progress'); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(n >= 2, `${n} blocks`);
    for (const g of gates) {
      g.resolve();
      await new Promise((r) => setTimeout(r, 20));
    }
    await run;
    const progress = posted.filter((m) => m.type === 'block-progress');
    // The requests going out, then the three batches.
    assert.equal(progress.length, 4, 'one message per turn, not one per worker');
    for (const [k, m] of progress.entries()) {
      assert.ok(m.type === 'block-progress');
      assert.deepEqual(
        m.progress.map((p) => p.streamedTokens),
        Array.from({ length: n }, () => 25 * k),
      );
      assert.deepEqual(new Set(m.progress.map((p) => p.index)).size, n);
    }
    const lastProgress = posted.lastIndexOf(progress.at(-1)!);
    const firstDone = posted.findIndex((m) => m.type === 'block' && m.block.status === 'done');
    assert.ok(lastProgress < firstDone, 'progress is posted before any block that ends after it');
  });

  it('turns /compact into a preview; edits and adopts it; undo restores the originals', async () => {
    const { c, posted, store, compactor } = await setup({ history: 6 });
    ctl = c;
    await c.handle({ type: 'send', text: '/compact "keep the answers"' });
    assert.equal(store.snapshot.focus, 'keep the answers', 'the focus becomes the standing focus');
    assert.equal(store.snapshot.compactions.length, 0, 'nothing adopted without the user');
    const views = posted
      .filter((m): m is Extract<HostToWebview, { type: 'compaction' }> => m.type === 'compaction')
      .map((m) => m.compaction!);
    const ready = views[views.length - 1]!;
    assert.equal(ready.state, 'ready');
    assert.equal(ready.focus, 'keep the answers');
    assert.ok(ready.blocks.length >= 2, `parallel blocks (${ready.blocks.length})`);
    assert.ok(ready.blocks.every((b) => b.status === 'done' && b.summary));
    assert.ok(compactor.requests.length >= 2);
    assert.ok(
      posted.some((m) => m.type === 'block'),
      'blocks stream as deltas',
    );

    await c.handle({ type: 'block-edit', compactionId: ready.id, block: 0, text: 'DECISIONS:\n- edited by hand' });
    const edited = posted.filter((m) => m.type === 'block').pop() as Extract<HostToWebview, { type: 'block' }>;
    assert.deepEqual([edited.block.status, edited.block.summary], ['edited', 'DECISIONS:\n- edited by hand']);

    await c.handle({ type: 'compaction-adopt', compactionId: ready.id });
    assert.equal(store.snapshot.compactions.length, 1);
    const done = posted.filter((m) => m.type === 'notice').pop() as Extract<HostToWebview, { type: 'notice' }>;
    assert.match(done.text, /^Compacted: \d{1,3}(,\d{3})+ → \d{1,3}(,\d{3})* tokens\./, 'token counts read as elsewhere, with separators');
    const s = lastSnapshot(posted);
    assert.equal(s.compactionDepth, 1);
    const summary = s.messages.find((m) => m.origin === 'summary')!;
    assert.match(summary.content, /edited by hand/);
    assert.ok(summary.archivedCount! > 0);
    assert.equal(s.compaction!.state, 'adopted');

    await c.handle({ type: 'expand-summary', summaryId: summary.id });
    const archived = posted.find((m) => m.type === 'archived') as Extract<HostToWebview, { type: 'archived' }>;
    assert.equal(archived.messages.length, summary.archivedCount);

    await c.handle({ type: 'undo' });
    assert.equal(lastSnapshot(posted).compactionDepth, 0);
    assert.equal(lastSnapshot(posted).messages.length, 13);
    // The panel no longer says "adopted" of the compaction just undone: the last word on it, snapshot or delta, is none.
    const panel = posted.filter((m) => m.type === 'snapshot' || m.type === 'compaction').pop()!;
    assert.equal(panel.type === 'snapshot' ? panel.snapshot.compaction : panel.compaction, null);
  });

  // The review editor's and the side bar's Keep pins a fact while the compaction is open: the first pin puts the pinned
  // block at the frame, and every message after it moves down one.
  it("a compaction's blocks follow their messages when a first pin renumbers them, and are marked stale once adopted", async () => {
    const { c, posted } = await setup({ history: 6 });
    ctl = c;
    await c.handle({ type: 'send', text: '/compact' });
    const view = () => (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    await c.handle({ type: 'ready' });
    const before = lastSnapshot(posted);
    assert.equal(before.compaction!.version, before.split.version, 'planned on the context the view shows');
    const idsOf = (s: typeof before) => s.compaction!.blocks.map((b) => [s.messages[b.firstMessage]!.id, s.messages[b.lastMessage]!.id]);
    await c.handle({ type: 'pin', text: 'keep the retry limit at 5', kind: 'constraint', messageId: null });
    await c.handle({ type: 'ready' });
    const pinned = lastSnapshot(posted);
    assert.notEqual(pinned.split.version, before.split.version, 'the pinned block shifts every index after the frame');
    assert.equal(pinned.compaction!.version, pinned.split.version, 'the blocks moved with their messages');
    assert.deepEqual(
      pinned.compaction!.blocks.map((b) => b.firstMessage),
      before.compaction!.blocks.map((b) => b.firstMessage + 1),
    );
    assert.deepEqual(idsOf(pinned), idsOf(before), 'each block spans the same messages');
    // So does the split Adopt uses: the handle is at it, and the side bar shows the compaction's own figures there.
    assert.equal(before.compaction!.tailStartIndex, before.split.tailStartIndex);
    assert.equal(pinned.compaction!.tailStartIndex, before.compaction!.tailStartIndex! + 1);
    assert.equal(pinned.messages[pinned.compaction!.tailStartIndex!]!.id, before.messages[before.split.tailStartIndex]!.id);
    await c.handle({ type: 'compaction-adopt', compactionId: view().id });
    await c.handle({ type: 'ready' });
    const adopted = lastSnapshot(posted);
    assert.equal(adopted.compaction!.state, 'adopted');
    assert.notEqual(adopted.split.version, adopted.compaction!.version, 'its messages are archived: the indices are stale');
  });

  it("a summary's archived originals are the ones it summarised, not a preserved turn's capped outputs", async () => {
    const { c, posted, store } = await setup({
      history: 6,
      strategy: 'recent-turns',
      prepare: async (st) => {
        await st.append({ role: 'user', content: 'Read the whole log.' });
        const call = { id: 'log_1', type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"big.log"}' } };
        await st.append({ role: 'assistant', content: null, tool_calls: [call] });
        await st.append({
          role: 'tool',
          tool_call_id: 'log_1',
          content: Array.from({ length: 4000 }, (_, i) => `log line ${i} of the build`).join('\n'),
        });
        await st.append({ role: 'assistant', content: 'The log is long.' });
      },
    });
    ctl = c;
    await c.handle({ type: 'compact', focus: null, tailStartIndex: null });
    const view = (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    await c.handle({ type: 'compaction-adopt', compactionId: view.id });
    await c.handle({ type: 'ready' });
    const record = store.snapshot.compactions[0]!;
    assert.ok(
      store.active().messages.some((m) => m.id.endsWith('~capped')),
      'fixture: the preserved turn was capped',
    );
    const summary = lastSnapshot(posted).messages.find((m) => m.origin === 'summary')!;
    assert.equal(summary.archivedCount, record.coveredIds.length, 'the originals the summary stands for');
    assert.ok(store.archived().length > record.coveredIds.length, "recall still finds the capped output's whole original");
    await c.handle({ type: 'expand-summary', summaryId: summary.id });
    const archived = posted.find((m) => m.type === 'archived') as Extract<HostToWebview, { type: 'archived' }>;
    assert.deepEqual(archived.messages.map((m) => m.id).sort(), [...record.coveredIds].sort());
  });

  it('shows the head, block and summary sizes calibrated, as the chat and the timeline count tokens', async () => {
    const viewAt = async (factor: number) => {
      const { c, posted, ledger } = await setup({ history: 6 });
      ledger.calibration.load({ factor, samples: 20 });
      await c.handle({ type: 'compact', focus: null, tailStartIndex: 7 });
      const v = (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
      await c.dispose();
      return v;
    };
    const raw = await viewAt(1);
    const cal = await viewAt(1.5);
    assert.equal(cal.headTokens, Math.round(raw.headTokens * 1.5));
    assert.deepEqual(
      cal.blocks.map((b) => b.tokens),
      raw.blocks.map((b) => Math.round(b.tokens * 1.5)),
    );
    assert.equal(cal.totals!.summaryTokens, Math.round(raw.totals!.summaryTokens * 1.5));
    assert.equal(cal.totals!.compressionRatio, raw.totals!.compressionRatio, 'head ÷ summary does not change');
  });

  it('compacts at a dragged split, and cancel adopts nothing', async () => {
    const { c, posted, store } = await setup({ history: 6 });
    ctl = c;
    await c.handle({ type: 'compact', focus: null, tailStartIndex: 5 });
    const view = (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(view.state, 'ready');
    assert.equal(Math.max(...view.blocks.map((b) => b.lastMessage)), 4, 'the head ends right before the split');
    await c.handle({ type: 'compaction-cancel', compactionId: view.id });
    assert.equal(
      (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!.state,
      'cancelled',
    );
    assert.equal(store.snapshot.compactions.length, 0);
  });

  // A UI review pressed Compact here beside a ready preview: its summaries (and any edit) went without a word.
  it('asks before a new compaction replaces the written summaries of the open one, and keeps it when told to', async () => {
    const asked: string[] = [];
    let answer = false;
    const { c, posted } = await setup({ history: 6, confirm: async (m) => (asked.push(m), answer) });
    ctl = c;
    const shown = () => (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    await c.handle({ type: 'compact', focus: null, tailStartIndex: 5 });
    const first = shown();
    assert.equal(first.state, 'ready');
    assert.equal(asked.length, 0, 'nothing to lose the first time');
    await c.handle({ type: 'block-edit', compactionId: first.id, block: 0, text: 'DECISIONS:\n- by hand' });
    await c.handle({ type: 'compact', focus: null, tailStartIndex: 7 });
    assert.match(
      asked[0] ?? '',
      new RegExp(
        `^Discard the open compaction \\(${first.blocks.length} of ${first.blocks.length} block summaries, 1 edited by you,\\) and plan a new one at message #7\\?$`,
      ),
    );
    assert.equal(shown().id, first.id, 'kept');
    // And said: the view's "Compacting…" hint waits for an answer.
    assert.ok(posted.some((m) => m.type === 'notice' && m.text === 'The open compaction is kept.'));
    assert.equal(shown().state, 'ready');
    answer = true;
    await c.handle({ type: 'compact', focus: null, tailStartIndex: 7 });
    assert.notEqual(shown().id, first.id, 'replaced once the user agreed');
  });

  // The view cuts a long tool output to its head and tail; the compaction replaces all of it. An error line in the
  // middle of a test run is exactly the fact the loss report is for.
  it("the loss report judges a long tool output's whole text, not the view's cut copy", async () => {
    const lines = Array.from({ length: 400 }, (_, i) =>
      i === 200 ? 'ConnectionResetError: pool_exhausted in src/db/pool.ts' : `ok line ${i} of the test run, nothing to report`,
    );
    const { c, posted } = await setup({
      history: 4,
      prepare: async (store) => {
        await store.append({ role: 'user', content: 'Run the tests.' });
        const call = { id: 'run_1', type: 'function' as const, function: { name: 'run_command', arguments: '{"command":"npm test"}' } };
        await store.append({ role: 'assistant', content: null, tool_calls: [call] });
        await store.append({ role: 'tool', tool_call_id: 'run_1', content: lines.join('\n') });
        await store.append({ role: 'assistant', content: 'The tests ran.' });
        await store.append({ role: 'user', content: 'Thanks, carry on.' });
      },
    });
    ctl = c;
    await c.handle({ type: 'ready' });
    const output = lastSnapshot(posted).messages.find((m) => m.role === 'tool')!;
    assert.ok(output.truncated && !output.content.includes('ConnectionResetError'), 'the view shows the output without its middle');
    assert.equal(output.lines, 400, "the view is told the whole output's line count");
    await c.handle({ type: 'compact', focus: null, tailStartIndex: output.index + 2 });
    const view = (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(view.state, 'ready');
    assert.ok(!view.blocks.some((b) => b.summary?.includes('ConnectionResetError')), "the fake compactor's summaries lack it");
    const lost = view.loss!.first.flatMap((f) => f.key.split(' · '));
    assert.ok(lost.includes('ConnectionResetError') && lost.includes('src/db/pool.ts'), `dropped: ${lost.join(', ')}`);
  });

  it('preserving user messages, the loss report leaves out the user messages a block spans but keeps in context', async () => {
    const { c, posted } = await setup({
      strategy: 'user-messages',
      prepare: async (store) => {
        for (let i = 0; i < 4; i++) {
          await store.append({ role: 'user', content: `Step ${i}: never touch src/db/schema${i}.sql while fixing parseHeader${i}.` });
          await store.append({
            role: 'assistant',
            content: `Done with step ${i}: edited src/http/headers${i}.ts ${'and checked it. '.repeat(40)}`,
          });
        }
      },
    });
    ctl = c;
    await c.handle({ type: 'compact', focus: null, tailStartIndex: null });
    const view = (posted.filter((m) => m.type === 'compaction').pop() as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(view.state, 'ready');
    const spanned = view.blocks.flatMap((b) => b.kept ?? []);
    assert.ok(spanned.length > 0, 'fixture: a block spans kept user messages');
    await c.handle({ type: 'ready' });
    const messages = lastSnapshot(posted).messages;
    assert.ok(spanned.every((i) => messages[i]!.role === 'user'));
    const r = lossWithFallback(messages, view);
    assert.ok(r.dropped.length > 0, 'the agent messages lose facts');
    assert.deepEqual(
      r.dropped.filter((f) => messages[f.messageIndex]!.role === 'user').map((f) => f.key),
      [],
      'nothing from a kept user message is reported lost',
    );
  });

  it('pins from the view land in the pinned block; empty or duplicate pins are refused with a notice', async () => {
    const { c, posted, store } = await setup({ history: 1 });
    ctl = c;
    await c.handle({ type: 'pin', text: ' never touch prod ', kind: 'constraint', messageId: null });
    await c.handle({ type: 'pin', text: 'never touch prod', kind: 'constraint', messageId: null });
    await c.handle({ type: 'pin', text: '   ', kind: 'note', messageId: null });
    assert.deepEqual(
      store.snapshot.pins.map((p) => [p.text, p.source]),
      [['never touch prod', 'user']],
    );
    const s = lastSnapshot(posted);
    assert.equal(s.messages[1]!.origin, 'pinned');
    assert.match(s.messages[1]!.content, /never touch prod/);
    assert.deepEqual(
      posted.filter((m) => m.type === 'notice').map((m) => (m as { text: string }).text),
      ['Already pinned.', 'Nothing to pin: the text is empty.'],
    );
    await c.handle({ type: 'edit-pin', pinId: store.snapshot.pins[0]!.id, text: 'never touch production' });
    assert.equal(store.snapshot.pins[0]!.text, 'never touch production');
    await c.handle({ type: 'unpin', pinId: store.snapshot.pins[0]!.id });
    assert.equal(store.snapshot.pins.length, 0);
  });

  it('explains unknown slash commands and an empty undo instead of failing', async () => {
    const { c, posted } = await setup();
    ctl = c;
    await c.handle({ type: 'send', text: '/compcat now' });
    await c.handle({ type: 'undo' });
    assert.deepEqual(
      posted.map((m) => m.type),
      ['notice', 'notice'],
    );
    assert.match((posted[0] as { text: string }).text, /Unknown command \/compcat/);
  });
});
