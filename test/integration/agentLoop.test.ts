import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentLoop } from '../../src/core/agent/agentLoop';
import type { AgentSettings } from '../../src/core/agent/agentLoop';
import type { AgentEvent } from '../../src/core/agent/events';
import { waitsOf } from '../unit/helpers/waitLine';
import { pinTool } from '../../src/core/agent/pinTool';
import { recallTool } from '../../src/core/agent/recall';
import { agentSystemPrompt } from '../../src/core/agent/systemPrompt';
import { autoApprove, ToolRegistry } from '../../src/core/agent/tools';
import { toWire } from '../../src/core/messages';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { SessionStore } from '../../src/core/session/sessionStore';
import { randomIds, systemClock } from '../../src/core/session/storage';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { Semaphore, VllmClient } from '../../src/llm';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { nodeWorkspaceTools } from '../../src/node/tools';
import { startSimulator } from '../sim';
import type { ScriptReply, SimHandle } from '../sim';

const WINDOW = 12_000;

/** A workspace of small TypeScript modules for the scripted agent to read. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sp-agent-'));
  mkdirSync(join(dir, 'src'));
  for (let i = 0; i < 12; i++) {
    const body = Array.from(
      { length: 20 },
      (_, k) => `export function handler${i}_${k}(input: string): number {\n  return input.length + ${i * 100 + k}; // port ${8000 + i}\n}`,
    ).join('\n');
    writeFileSync(join(dir, 'src', `mod${i}.ts`), `// src/mod${i}.ts: request handlers for service ${i}\n${body}\n`);
  }
  return dir;
}

/** n steps that each read a module, then a final answer. */
function readingScript(n: number, final = 'All modules reviewed; nothing to change.'): ScriptReply[] {
  const replies: ScriptReply[] = [];
  for (let i = 0; i < n; i++)
    replies.push({ content: `Reading module ${i % 12}.`, tool_calls: [{ name: 'read_file', arguments: { path: `src/mod${i % 12}.ts` } }] });
  replies.push({ content: final });
  return replies;
}

interface Harness {
  loop: AgentLoop;
  /** The workspace the tools work in. */
  dir: string;
  store: SessionStore;
  /** The tool definitions every agent request sends. */
  tools: ToolRegistry;
  events: AgentEvent[];
  of<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }>[];
}

describe('agent loop with compaction, against the scripted simulator', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  let ledger: TokenLedger;

  before(async () => {
    ledger = new TokenLedger(await loadTiktokenCounter());
  });
  afterEach(async () => {
    await sim?.close();
  });

  async function harness(over: Partial<AgentSettings> = {}, simOpts: Parameters<typeof startSimulator>[0] = {}): Promise<Harness> {
    sim = await startSimulator({ maxModelLen: WINDOW, timeScale: 0.05, ...simOpts });
    const dir = workspace();
    const store = await SessionStore.create({ storage: new NodeFileStorage() }, join(dir, '.session.jsonl'));
    await store.append({ role: 'system', content: agentSystemPrompt('demo') });
    const client = new VllmClient({ baseURL: sim.url });
    const tools = new ToolRegistry([
      ...nodeWorkspaceTools(dir),
      recallTool(() => store.archived()),
      pinTool(store, randomIds, systemClock),
    ]);
    const settings: AgentSettings = {
      contextWindow: WINDOW,
      replyReserve: 256,
      thresholds: { hi: 0.75, lo: 0.4, block: 0.95 },
      strategy: 'token-fraction',
      compaction: { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: WINDOW, blockTokens: 2048 },
      asyncCompaction: true,
      judge: { enabled: true, threshold: 7 },
      maxSteps: 40,
      idle: { idleMs: 60_000, minFraction: 0.3 },
      ...over,
    };
    const loop = new AgentLoop(
      {
        store,
        ledger,
        model: client,
        compactor: client,
        compactorLimiter: new Semaphore(8),
        judge: client,
        tools,
        approvals: autoApprove,
        clock: systemClock,
        ids: randomIds,
      },
      settings,
    );
    const events: AgentEvent[] = [];
    loop.on((e) => events.push(e));
    return { loop, dir, store, tools, events, of: (type) => events.filter((e) => e.type === type) as never };
  }

  function overlapping(kindA: string, kindB: string): boolean {
    const a = sim.stats.requests.filter((r) => r.kind === kindA && r.finished !== undefined);
    const b = sim.stats.requests.filter((r) => r.kind === kindB && r.finished !== undefined);
    return a.some((x) => b.some((y) => x.arrival < y.finished! && y.arrival < x.finished!));
  }

  it('the context gauge counts the tool definitions the request sends, as the server does, from the first message', async () => {
    const h = await harness();
    sim.setScript([{ content: 'Hello.' }]);
    await h.loop.send('hi', new AbortController().signal);
    const wire = h.store.active().messages.map(toWire);
    const server = await new VllmClient({ baseURL: sim.url }).tokenize(wire, { tools: h.tools.specs() });
    const shown = h.loop.contextTokens();
    // A short session is mostly system prompt and tool definitions: left out, the gauge showed a fraction of it.
    assert.ok(Math.abs(shown - server.count) / server.count < 0.1, `gauge ${shown} against the server's ${server.count}`);
  });

  it('crosses hi, keeps working while the compactor runs, and adopts [system, summary, tail at snapshot, next-k steps] after the judge accepts', async () => {
    const h = await harness({}, { summaryTokens: 300 });
    sim.setScript(readingScript(16));
    sim.queueJudgeVerdicts([{ alignment: 9, non_contradiction: 8, diagnosis: 'covers the modules read so far' }]);
    // What the session looked like the moment the first compaction was adopted.
    let atAdoption: { active: string[]; all: string[]; tailStartId: string | null; lastSnapshotId: string | null } | undefined;
    h.loop.on((e) => {
      if (e.type === 'compaction-adopted' && !atAdoption) {
        const rec = h.store.snapshot.compactions.at(-1)!;
        atAdoption = {
          active: h.store.active().messages.map((m) => m.id),
          all: h.store.snapshot.messages.map((m) => m.id),
          tailStartId: rec.tailStartId,
          lastSnapshotId: rec.lastSnapshotId,
        };
      }
    });
    const outcome = await h.loop.send('Review every module under src/ for off-by-one errors.', new AbortController().signal);
    await h.loop.settle();
    if (process.env.DEBUG_EVENTS)
      for (const e of h.events) if (!['assistant-delta', 'compaction'].includes(e.type)) console.log(JSON.stringify(e).slice(0, 300));
    assert.equal(outcome.reason, 'answer');
    assert.ok(h.of('trigger-fired').some((e) => e.trigger === 'budget'));
    const started = h.of('compaction-started')[0]!;
    assert.equal(started.background, true);
    // The side bar's tracker learns of a loop's compaction from compaction-started: its plan must come after.
    const startedAt = h.events.indexOf(started);
    const plannedAt = h.events.findIndex(
      (e) => e.type === 'compaction' && e.event.type === 'planned' && e.event.compactionId === started.compactionId,
    );
    assert.ok(startedAt >= 0 && plannedAt > startedAt, `compaction-started at ${startedAt}, its plan at ${plannedAt}`);
    assert.ok(overlapping('script', 'compaction'), 'agent requests ran while compaction requests were in flight');
    const verdict = h.of('judge-verdict').find((v) => v.compactionId === started.compactionId)!;
    assert.ok(verdict.nextSteps > 0, 'judged against the steps taken meanwhile');
    assert.equal(verdict.verdict.kind === 'scored' && verdict.verdict.accepted, true);
    const adopted = h.of('compaction-adopted')[0]!;
    assert.equal(adopted.compactionId, started.compactionId);
    assert.equal(adopted.judged, true);
    assert.ok(adopted.tokensAfter < adopted.tokensBefore);
    // The adopted context: system, the request this one long turn works on (kept verbatim), summary, the tail at
    // snapshot, then every step taken since.
    const a = atAdoption!;
    const tailStart = a.all.indexOf(a.tailStartId!);
    const snapshotEnd = a.all.indexOf(a.lastSnapshotId!);
    assert.ok(tailStart > 0 && snapshotEnd >= tailStart);
    assert.equal(a.active[0], a.all[0], 'the system prompt');
    assert.equal(a.active[1], a.all[1], "the user's request");
    assert.match(a.active[2]!, /_summary$/);
    assert.deepEqual(a.active.slice(3), a.all.slice(tailStart), 'tail at snapshot plus the next-k steps, in order');
    assert.ok(a.all.length - 1 > snapshotEnd, 'there were steps after the snapshot');
  });

  it('with a reply reserve a quarter of the window, the background compaction is adopted before any request is refused', async () => {
    // Every request asks for the reserve as max_tokens: a prompt past the window less the reserve is refused, however
    // far below `block` of the whole window it is. The thresholds are of that room, so the budget fires first.
    const h = await harness({ replyReserve: 3_000 }, { summaryTokens: 300 });
    sim.setScript(readingScript(24));
    sim.queueJudgeVerdicts(Array.from({ length: 4 }, () => ({ alignment: 9, non_contradiction: 9, diagnosis: 'covers the modules' })));
    const outcome = await h.loop.send('Review every module under src/ for off-by-one errors.', new AbortController().signal);
    await h.loop.settle();
    assert.equal(outcome.reason, 'answer');
    const triggers = h.of('trigger-fired').map((e) => e.trigger);
    assert.equal(triggers[0], 'budget');
    assert.ok(!triggers.includes('reactive'), `no request was refused as too long: ${triggers.join(', ')}`);
    assert.equal(
      h.of('compaction-adopted')[0]?.compactionId,
      h.of('compaction-started')[0]!.compactionId,
      'the background run was adopted',
    );
  });

  it('on a reject makes one targeted update with the diagnosis, judged again, then adopts', async () => {
    const h = await harness({}, { summaryTokens: 300 });
    sim.setScript(readingScript(16));
    sim.queueJudgeVerdicts([
      { alignment: 3, non_contradiction: 8, diagnosis: 'The summary lacks handler5_7 from src/mod5.ts.' },
      { alignment: 8, non_contradiction: 9, diagnosis: 'Fine now.' },
    ]);
    await h.loop.send('Review every module under src/.', new AbortController().signal);
    await h.loop.settle();
    const first = h.of('compaction-started')[0]!.compactionId;
    const verdicts = h.of('judge-verdict');
    assert.equal(verdicts[0]!.compactionId, first);
    assert.deepEqual(
      verdicts.slice(0, 2).map((v) => v.attempt),
      [1, 2],
    );
    assert.equal(verdicts[1]!.verdict.kind === 'scored' && verdicts[1]!.verdict.accepted, true);
    assert.equal(h.of('compaction-amending')[0]!.diagnosis, 'The summary lacks handler5_7 from src/mod5.ts.');
    const amendRequest = sim.stats.requests.filter((r) => r.kind === 'compaction');
    assert.ok(amendRequest.length >= 2);
    assert.equal(h.of('compaction-fallback').length, 0);
    const adoptedId = h.of('compaction-adopted')[0]!.compactionId;
    assert.equal(h.of('compaction-amending')[0]!.rewriteId, adoptedId, 'the amending event names the rewrite that is adopted');
    const record = h.store.snapshot.compactions.find((c) => c.id === adoptedId) ?? h.store.snapshot.undone.find((c) => c.id === adoptedId);
    assert.equal(record!.stats!.blocks, 1, 'the targeted update is one pass over the head');
    // The diagnosis reached the worker as fenced review notes (not as the focus) and steered what the update kept.
    assert.match(record!.summary.content!, /handler5_7/, 'the update was steered by the diagnosis');
    assert.doesNotMatch(record!.summary.content!, /Focus requested: .*handler5_7/, 'the diagnosis is not presented as the developer focus');
    // Verdicts and the calibration survive a reopen: they are events in the log.
    const reopened = await SessionStore.open({ storage: new NodeFileStorage() }, h.store.path);
    const kept = reopened.snapshot.verdicts[adoptedId]!;
    assert.equal(kept.attempt, 2);
    assert.equal(kept.verdict.kind === 'scored' && kept.verdict.accepted, true);
    assert.ok(reopened.snapshot.calibration && reopened.snapshot.calibration.samples > 0, 'the token calibration was recorded');
    assert.equal(reopened.snapshot.calibration.factor, h.store.snapshot.calibration!.factor);
  });

  it('after a second reject falls back to a synchronous compaction', async () => {
    const h = await harness({}, { summaryTokens: 300 });
    sim.setScript(readingScript(16));
    sim.queueJudgeVerdicts([
      { alignment: 2, non_contradiction: 9, diagnosis: 'Missing the task.' },
      { alignment: 4, non_contradiction: 9, diagnosis: 'Still missing the task.' },
    ]);
    const outcome = await h.loop.send('Review every module under src/.', new AbortController().signal);
    await h.loop.settle();
    assert.equal(outcome.reason, 'answer');
    assert.equal(h.of('compaction-fallback').length >= 1, true);
    const fallbackIdx = h.events.findIndex((e) => e.type === 'compaction-fallback');
    const next = h.events.slice(fallbackIdx).filter((e) => e.type === 'compaction-started' || e.type === 'compaction-adopted');
    assert.equal(next[0]!.type === 'compaction-started' && next[0]!.background, false, 'a synchronous compaction follows');
    assert.equal(next[1]!.type === 'compaction-adopted' && next[1]!.judged, false, 'and is adopted without the judge');
  });

  it('waits at block when the summary is not ready, then continues', async () => {
    // Slow summaries, big steps: the context runs from hi to block before compaction ends.
    const h = await harness({ thresholds: { hi: 0.5, lo: 0.3, block: 0.62 } }, { summaryTokens: 1500, timeScale: 0.2 });
    sim.setScript(readingScript(16));
    sim.queueJudgeVerdicts([{ alignment: 9, non_contradiction: 9, diagnosis: 'ok' }]);
    const outcome = await h.loop.send('Review every module under src/.', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    const waits = h.of('waiting-for-compaction');
    assert.ok(waits.length >= 1, 'the agent waited');
    const waitIdx = h.events.indexOf(waits[0]!);
    const adoptIdx = h.events.findIndex((e) => e.type === 'compaction-adopted');
    const nextStep = h.events.findIndex((e, i) => i > waitIdx && e.type === 'step-started');
    assert.ok(adoptIdx > waitIdx && nextStep > adoptIdx, 'the next step started only after adoption');
  });

  it("on the server's context-length 400 compacts synchronously and retries the same request once", async () => {
    // The agent believes the window is much larger than the server's, so only the server can stop it.
    const h = await harness(
      { contextWindow: 100_000, compaction: { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 100_000, blockTokens: 2048 } },
      { summaryTokens: 200 },
    );
    sim.setScript(readingScript(20));
    const outcome = await h.loop.send('Review every module under src/.', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    const reactive = h.of('trigger-fired').filter((e) => e.trigger === 'reactive');
    assert.ok(reactive.length >= 1);
    assert.deepEqual(
      h.of('window-corrected').map((e) => [e.window, e.was]),
      [[12_000, 100_000]],
    );
    const overflows = sim.stats.requests.filter((r) => r.httpStatus === 400);
    assert.equal(overflows.length, reactive.length, 'each overflow was followed by a successful retry, not another 400');
    assert.ok(h.of('compaction-adopted').length >= 1);
    assert.equal(h.of('compaction-adopted')[0]!.judged, false);
    // The wait line: the model, then the compaction it stopped for, then the model again for the retried request.
    const said = waitsOf(h.events);
    const at = said.indexOf('compaction now');
    assert.ok(at > 0 && said[at - 1] === 'model null' && said[at + 1] === 'model null', said.join(' → '));
  });

  it('a compaction that would leave the request still too long is not adopted: the session is unchanged, and the error says why', async () => {
    const h = await harness({}, { summaryTokens: 200 });
    sim.setScript(readingScript(6, 'Read six modules.'));
    await h.loop.send('Review the first modules.', new AbortController().signal);
    const before = h.store.snapshot.messages.length;
    // One message longer than the window on its own: no summary of what came before can make room for it.
    const huge = Array.from({ length: 2_400 }, (_, i) => `line ${i}: the parser keeps state ${i % 97}`).join('\n');
    const outcome = await h.loop.send(`Check this log:\n${huge}`, new AbortController().signal);
    assert.equal(outcome.reason, 'error');
    assert.equal(h.store.snapshot.compactions.length, 0, 'no compaction adopted');
    assert.equal(h.store.snapshot.messages.length, before + 1, 'only the message itself was added');
    const error = h.of('error').at(-1)!.error;
    assert.match(error, /^Compaction not adopted: it would leave \d+ tokens, more than the \d+ a request may use .*too long on their own/);
  });

  it('cancelling a background compaction adopts nothing and the agent finishes its task', async () => {
    const h = await harness({}, { summaryTokens: 1500, timeScale: 0.3 });
    sim.setScript(readingScript(14));
    h.loop.on((e) => {
      if (e.type === 'compaction-started' && e.background) setTimeout(() => h.loop.cancelCompaction(), 50);
    });
    const outcome = await h.loop.send('Review every module under src/.', new AbortController().signal);
    await h.loop.settle();
    assert.equal(outcome.reason, 'answer');
    assert.equal(h.of('compaction-started').length >= 1, true);
    assert.equal(h.store.snapshot.compactions.length, 0, 'nothing adopted');
    assert.ok(h.of('compaction').some((e) => e.event.type === 'cancelled'));
    // The abort reaches the server over HTTP: give it a moment to see the sockets close.
    const stopped = () => sim.stats.requests.filter((r) => r.kind === 'compaction').every((r) => r.status !== 'running');
    for (let i = 0; i < 40 && !stopped(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(stopped());
  });

  it('stopping the agent mid-step leaves every tool call answered', async () => {
    const h = await harness({}, { timeScale: 0.2 });
    sim.setScript(readingScript(30));
    const ctl = new AbortController();
    h.loop.on((e) => {
      if (e.type === 'tool-result' && h.of('tool-result').length === 3) ctl.abort();
    });
    const outcome = await h.loop.send('Review every module under src/.', ctl.signal);
    assert.equal(outcome.reason, 'cancelled');
    const msgs = h.store.snapshot.messages;
    const calls = msgs.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const answered = new Set(msgs.filter((m) => m.role === 'tool').map((m) => (m as { tool_call_id: string }).tool_call_id));
    assert.ok(
      calls.every((c) => answered.has(c)),
      'no dangling tool call in the log',
    );
    const reopened = await SessionStore.open({ storage: new NodeFileStorage() }, h.store.path);
    assert.equal(reopened.snapshot.messages.length, msgs.length, 'the log on disk matches');
  });

  it("an idle compaction is held, then judged against the user's next message and adopted before the agent answers it", async () => {
    const h = await harness({ idle: { idleMs: 0, minFraction: 0.3 } }, { summaryTokens: 300 });
    sim.setScript([...readingScript(7, 'Reviewed seven modules.'), { content: 'Module 9 uses port 8009.' }]);
    await h.loop.send('Review the first modules.', new AbortController().signal);
    assert.equal(h.of('compaction-started').length, 0);
    assert.equal(h.loop.maybeIdleCompact(), true, 'the temporal trigger fired while idle');
    const bg = h.loop.backgroundCompaction!;
    for (let i = 0; i < 100 && !h.of('compaction-held').length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.of('compaction-held').length, 1, 'held for preview: no steps to judge against yet');
    assert.equal(bg.outcome, undefined);
    sim.queueJudgeVerdicts([{ alignment: 8, non_contradiction: 8, diagnosis: 'ok' }]);
    const secondTurn = h.events.length;
    await h.loop.send('Which port does module 9 use?', new AbortController().signal);
    // The side bar says the judge holds the turn, then the model's first tokens once it has the verdict.
    assert.deepEqual(waitsOf(h.events.slice(secondTurn)).slice(0, 2), ['compaction verdict', 'model null']);
    const verdict = h.of('judge-verdict')[0]!;
    assert.equal(verdict.nextSteps, 1, "judged against the user's message");
    const adoptIdx = h.events.findIndex((e) => e.type === 'compaction-adopted');
    const answerIdx = h.events.findIndex((e) => e.type === 'assistant-message' && e.message.content === 'Module 9 uses port 8009.');
    assert.ok(adoptIdx >= 0 && adoptIdx < answerIdx, 'adopted before the agent answered the new message');
  });

  it('/compact "focus" supersedes an in-flight compaction and becomes the standing focus', async () => {
    const h = await harness({}, { summaryTokens: 1500, timeScale: 0.2 });
    sim.setScript(readingScript(14));
    sim.queueJudgeVerdicts([{ alignment: 9, non_contradiction: 9, diagnosis: 'ok' }]);
    let superseded = false;
    h.loop.on((e) => {
      if (e.type === 'compaction-started' && e.background && !superseded) {
        superseded = true;
        void h.loop.userCompact('keep the port numbers', new AbortController().signal);
      }
    });
    await h.loop.send('Review every module under src/.', new AbortController().signal);
    await h.loop.settle();
    assert.equal(h.store.snapshot.focus, 'keep the port numbers');
    assert.equal(h.of('compaction-superseded')[0]!.focus, 'keep the port numbers');
    const summary = h.store.active().messages.find((m) => m.kind === 'summary');
    assert.match(summary!.content!, /Focus requested: keep the port numbers/);
  });

  it('three dense tool outputs in one step share the third of the window between them', async () => {
    const h = await harness();
    for (const f of ['a', 'b', 'c']) writeFileSync(join(h.dir, `${f}.txt`), randomBytes(300_000).toString('base64'));
    const read = (path: string) => ({ name: 'read_file', arguments: { path, startLine: 1, endLine: 1 } });
    sim.setScript([
      { content: 'Reading all three.', tool_calls: [read('a.txt'), read('b.txt'), read('c.txt')] },
      { content: 'Three base64 blobs.' },
    ]);
    const outcome = await h.loop.send('What is in a.txt, b.txt and c.txt?', new AbortController().signal);
    assert.equal(outcome.reason, 'answer', JSON.stringify(h.of('error')));
    const results = h.store.snapshot.messages.filter((m) => m.role === 'tool');
    assert.equal(results.length, 3);
    const tokens = results.reduce((n, m) => n + ledger.calibrated(ledger.countText(m.content ?? '')), 0);
    assert.ok(tokens <= WINDOW / 3, `${tokens} tokens for the step in a ${WINDOW}-token window`);
  });

  it('a reply whose connection drops mid-stream is voided in the stream and sent again: the text after the reset is the answer', async () => {
    const h = await harness({}, { profile: 'unit', timeScale: 0.3 });
    sim.setScript([{ content: 'The retry loop backs off exponentially and gives up after five attempts, logging each one.' }]);
    sim.injectFault({ dropAfterChunks: 4 });
    const outcome = await h.loop.send('How does the retry loop work?', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    const kinds = h.events.map((e) => e.type).filter((t) => t === 'assistant-delta' || t === 'reply-reset');
    const reset = kinds.indexOf('reply-reset');
    assert.ok(reset > 0, `deltas of the dropped attempt, then the reset: ${kinds.join(' ')}`);
    const after = h.events
      .slice(h.events.findIndex((e) => e.type === 'reply-reset') + 1)
      .flatMap((e) => (e.type === 'assistant-delta' ? [e.text] : []))
      .join('');
    const stored = h.store.snapshot.messages.filter((m) => m.role === 'assistant').pop()!;
    assert.equal(after, stored.content, 'what streams after the reset is exactly the stored reply');
  });

  it('a 10 MB one-line tool output of dense text is cut to a third of the window in tokens, and the turn goes on', async () => {
    const h = await harness();
    // Base64 counts about one token per 1.4 characters: 60,000 characters of it were 43K tokens, over this 12K window.
    writeFileSync(join(h.dir, 'blob.txt'), randomBytes(7_500_000).toString('base64'));
    sim.setScript([
      { content: 'Reading it.', tool_calls: [{ name: 'read_file', arguments: { path: 'blob.txt', startLine: 1, endLine: 1 } }] },
      { content: 'It is one long base64 line.' },
    ]);
    const outcome = await h.loop.send('What is in blob.txt?', new AbortController().signal);
    assert.equal(outcome.reason, 'answer', JSON.stringify(h.of('error')));
    assert.deepEqual(h.of('error'), []);
    const result = h.store.snapshot.messages.find((m) => m.role === 'tool')!;
    assert.match(result.content ?? '', /\[Output truncated: .* chars cut\./);
    const tokens = ledger.calibrated(ledger.countText(result.content ?? ''));
    assert.ok(tokens <= WINDOW / 3, `${tokens} tokens in a ${WINDOW}-token window`);
    assert.equal(sim.stats.requests.filter((r) => r.httpStatus === 400).length, 0, 'no request over the window');
  });

  it('recall returns exact excerpts of compacted-away messages, and pins survive compaction', async () => {
    const h = await harness({}, { summaryTokens: 300 });
    sim.setScript([
      {
        content: 'Pinning the rule.',
        tool_calls: [{ name: 'pin', arguments: { text: 'Never change the public handler names', kind: 'constraint' } }],
      },
      ...readingScript(24),
    ]);
    sim.queueJudgeVerdicts([{ alignment: 9, non_contradiction: 9, diagnosis: 'ok' }]);
    await h.loop.send('Review every module under src/.', new AbortController().signal);
    await h.loop.settle();
    assert.ok(h.store.snapshot.compactions.length >= 1);
    const active = h.store.active().messages;
    assert.equal(active[1]!.kind, 'pinned');
    // The agent pinned it: it is set apart as the agent's note, not the user's instruction.
    assert.match(
      active[1]!.content!,
      /\nRecorded by the assistant with its pin tool [^\n]*\nConstraints:\n- Never change the public handler names/,
    );
    const recall = recallTool(() => h.store.archived());
    const r = await recall.execute({ query: 'handler0_3' }, { signal: new AbortController().signal, callId: 'x' });
    assert.match(r.content, /return input\.length \+ 3; \/\/ port 8000/, 'the exact original line comes back');
  });
  it('a call cut off by the reply limit is not run, even with its JSON closed by the server, and the model is told why', async () => {
    const h = await harness({}, { strictHistoryArguments: true });
    const longFile = Array.from({ length: 400 }, (_, i) => `export const line${i} = ${i};`).join('\n');
    sim.setScript([
      {
        content: 'Writing the constants file.',
        tool_calls: [{ name: 'write_file', arguments: { path: 'src/consts.ts', content: longFile } }],
      },
      { content: 'The file was too long for one reply; I will write it in parts.' },
    ]);
    const outcome = await h.loop.send('Write src/consts.ts with 400 constants.', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    assert.deepEqual(h.of('error'), []);
    // As vLLM streams it: the call as far as it got, its JSON closed, the reason 'tool_calls', 256 tokens written.
    const stored = h.store.snapshot.messages.find((m) => m.role === 'assistant' && m.tool_calls?.length);
    const args = JSON.parse(stored?.role === 'assistant' ? stored.tool_calls![0]!.function.arguments : '{}') as { content: string };
    assert.ok(args.content.length > 0 && args.content.length < longFile.length, `${args.content.length} of ${longFile.length}`);
    assert.equal(existsSync(join(h.dir, 'src', 'consts.ts')), false, 'a file cut short is not written');
    const result = h.store.snapshot.messages.find((m) => m.role === 'tool');
    assert.match(result?.content ?? '', /^Not run: your reply reached its limit of 256 tokens while writing this call/);
    assert.equal(sim.stats.requests.filter((r) => r.httpStatus === 400).length, 0);
  });
  it('an answer cut off by the reply limit says so, with the setting that sets it', async () => {
    const h = await harness();
    sim.setScript([{ content: Array.from({ length: 300 }, (_, i) => `Point ${i}: the retry loop is fine.`).join(' ') }]);
    const outcome = await h.loop.send('Explain the retry loop in detail.', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    assert.deepEqual(
      h.of('notice').map((n) => n.text),
      ['The reply stopped at its limit of 256 tokens (the reply reserve): ask the agent to go on.'],
    );
  });
  it('with tools described in the prompt, the whole calls of a cut-off reply run and the cut is said', async () => {
    const h = await harness({}, { toolParser: false });
    const longFile = Array.from({ length: 400 }, (_, i) => `export const line${i} = ${i};`).join('\n');
    // Without a tool parser the model writes its calls as text, and the cut falls inside the second block.
    const block = (name: string, args: object) => `\n\n\`\`\`tool_call\n${JSON.stringify({ name, arguments: args })}\n\`\`\``;
    sim.setScript([
      {
        content: `Reading, then writing.${block('read_file', { path: 'src/mod1.ts' })}${block('write_file', { path: 'src/consts.ts', content: longFile })}`,
      },
      { content: 'Done for now.' },
    ]);
    const outcome = await h.loop.send('Read mod1, then write src/consts.ts.', new AbortController().signal);
    assert.equal(outcome.reason, 'answer');
    const results = h.store.snapshot.messages.filter((m) => m.role === 'tool');
    assert.equal(results.length, 1, 'one whole call parsed from the text');
    assert.match(results[0]!.content, /request handlers for service 1/, 'and it ran');
    assert.equal(existsSync(join(h.dir, 'src', 'consts.ts')), false);
    assert.ok(h.of('notice').some((n) => /stopped at its limit of 256 tokens/.test(n.text)));
  });
});
