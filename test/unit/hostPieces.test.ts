import assert from 'node:assert/strict';
import { defaultSettings, readSettings } from '../../src/core/config/settings';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { MemoryStorage } from '../../src/core/session/memoryStorage';
import type { HostToWebview } from '../../src/protocol/messages';
import { agentSettingsFrom, modelChoice } from '../../src/host/agentSettings';
import { ApprovalBroker } from '../../src/host/approvals';
import { CompactionTracker } from '../../src/host/compactionTracker';
import { preview } from '../../src/host/log';
import { redactSecrets } from '../../src/llm/redact';
import { ConnectionError } from '../../src/llm/errors';
import { proposeEdit, proposeWrite, unifiedDiff } from '../../src/host/proposedChange';
import { SessionLibrary, summarizeLog } from '../../src/host/sessionLibrary';
import { describeFailure, gaugeStatus } from '../../src/host/userFacing';
import { cutForView } from '../../src/host/viewModel';
import { counterIds, fixedClock } from './helpers/memoryStorage';
import { sessionGauge } from '../../src/host/sessionSnapshot';
import type { ControllerEnvironment } from '../../src/host/controllerEnvironment';

const block = (index: number) => ({
  index,
  firstMessage: index * 2,
  lastMessage: index * 2 + 1,
  tokens: 100,
  status: 'queued' as const,
  streamedTokens: 0,
  summary: undefined,
  error: undefined,
  stats: undefined,
});
const stats = {
  inputTokens: 900,
  outputTokens: 50,
  cachedTokens: 800,
  ms: 120,
  endpoint: 0,
  usageReported: true,
  queuedMs: 0,
  instructionTokens: 40,
  attempts: 1,
  trimmed: false,
};
const totals = {
  headTokens: 200,
  summaryTokens: 100,
  inputTokens: 1800,
  outputTokens: 100,
  cachedTokens: 1600,
  compressionRatio: 2,
  wallMs: 300,
  requests: 2,
  maxInFlight: 2,
};

describe('host: compaction tracker (engine events → protocol deltas)', () => {
  const tracker = () =>
    new CompactionTracker({
      pins: () => [{ id: 'pin_1', text: 'never drop the users table', kind: 'constraint', source: 'user', createdAt: 0 }],
      judgeEnabled: () => true,
    });

  it('follows a user preview from planned through streaming to ready, with totals and named missing pins', () => {
    const t = tracker();
    const first = t.start('c1', false, 'keep the plan', true);
    assert.deepEqual(
      first.map((m) => m.type),
      ['compaction'],
    );
    const ev = (e: CompactionEvent) => t.onCompactionEvent(e);
    const planned = ev({
      type: 'planned',
      compactionId: 'c1',
      blocks: [block(0), block(1)],
      headTokens: 200,
      tailStartIndex: block(1).lastMessage + 1,
      headingTokens: 0,
      layout: 'cache-aligned',
      mode: 'parallel',
      focus: 'keep the plan',
    });
    assert.equal((planned[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.blocks.length, 2);
    const streaming = ev({ type: 'block-streaming', compactionId: 'c1', block: 1, outputTokens: 32 });
    assert.deepEqual(streaming, [{ type: 'block-progress', compactionId: 'c1', progress: [{ index: 1, streamedTokens: 32 }] }]);
    const shown = t.current!.blocks[1];
    assert.deepEqual(shown, { ...block(1), status: 'streaming', streamedTokens: 32, summary: null, error: null, stats: null });
    ev({ type: 'block-done', compactionId: 'c1', block: 0, summary: 'S0', stats });
    ev({ type: 'block-done', compactionId: 'c1', block: 1, summary: 'S1', stats });
    const ready = ev({
      type: 'ready',
      compactionId: 'c1',
      totals,
      checks: { missingPins: ['pin_1'], openLoopsBefore: 2, openLoopsAfter: 1, openLoopsDropped: true, grows: false },
    });
    const view = (ready[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(view.state, 'ready', 'a preview waits for Adopt');
    assert.deepEqual(view.checks, {
      missingPins: ['never drop the users table'],
      openLoopsBefore: 2,
      openLoopsAfter: 1,
      openLoopsDropped: true,
      grows: false,
    });
    assert.equal(view.totals!.compressionRatio, 2);
    assert.equal(view.blocks[0]!.stats!.cachedTokens, 800);
    assert.ok(t.isPreview);
    // Events of other compactions do not touch it.
    assert.deepEqual(ev({ type: 'block-failed', compactionId: 'other', block: 0, error: 'x' }), []);
    const adopted = ev({ type: 'adopted', compactionId: 'c1', totals });
    assert.equal((adopted[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.state, 'adopted');
    assert.deepEqual(t.clearIfDone(), [{ type: 'compaction', compaction: null }]);
  });

  it('shows a background run as judging, keeps it through a targeted update under a new id, and records the verdict', () => {
    const t = tracker();
    t.onAgentEvent({ type: 'compaction-started', compactionId: 'b1', background: true, focus: undefined });
    t.onAgentEvent({
      type: 'compaction',
      event: {
        type: 'planned',
        compactionId: 'b1',
        blocks: [block(0)],
        headTokens: 100,
        tailStartIndex: block(0).lastMessage + 1,
        headingTokens: 0,
        layout: 'cache-aligned',
        mode: 'parallel',
        focus: undefined,
      },
    });
    t.onAgentEvent({ type: 'compaction', event: { type: 'block-done', compactionId: 'b1', block: 0, summary: 'S', stats } });
    const ready = t.onAgentEvent({
      type: 'compaction',
      event: {
        type: 'ready',
        compactionId: 'b1',
        totals,
        checks: { missingPins: [], openLoopsBefore: 0, openLoopsAfter: 0, openLoopsDropped: false, grows: false },
      },
    });
    assert.equal((ready[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.state, 'judging');
    t.onAgentEvent({
      type: 'judge-verdict',
      compactionId: 'b1',
      attempt: 1,
      nextSteps: 2,
      verdict: {
        kind: 'scored',
        alignment: 4,
        nonContradiction: 8,
        overall: 4,
        diagnosis: 'lost the migration file name',
        accepted: false,
      },
    });
    const amending = t.onAgentEvent({
      type: 'compaction-amending',
      compactionId: 'b1',
      rewriteId: 'b2',
      diagnosis: 'lost the migration file name',
    });
    assert.match((amending[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.note!, /amending/);
    const planned2 = t.onAgentEvent({
      type: 'compaction',
      event: {
        type: 'planned',
        compactionId: 'b2',
        blocks: [block(0)],
        headTokens: 100,
        tailStartIndex: block(0).lastMessage + 1,
        headingTokens: 0,
        layout: 'cache-aligned',
        mode: 'sequential',
        focus: 'x',
      },
    });
    const v2 = (planned2[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(v2.id, 'b2');
    assert.equal(v2.background, true);
    assert.equal(v2.verdict!.overall, 4, 'the first verdict stays visible until the second');
    const adopted = t.onAgentEvent({ type: 'compaction-adopted', compactionId: 'b2', tokensBefore: 9000, tokensAfter: 4000, judged: true });
    const v3 = (adopted[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(v3.state, 'adopted');
    assert.match(v3.note!, /9,000 → 4,000 tokens, accepted by the judge/);
    assert.ok(!t.isPreview);
  });

  it('marks held, superseded and failed compactions with the reason', () => {
    const t = tracker();
    t.start('b1', true, undefined, false);
    const held = t.onAgentEvent({ type: 'compaction-held', compactionId: 'b1', reason: 'no steps since the snapshot yet' });
    assert.equal((held[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.state, 'held');
    const sup = t.onAgentEvent({ type: 'compaction-superseded', compactionId: 'b1', focus: 'the DB plan' });
    assert.equal((sup[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!.focus, 'the DB plan');
    const failed = t.onAgentEvent({ type: 'compaction-failed', compactionId: 'b1', error: 'block 0: server error' });
    const v = (failed[0] as Extract<HostToWebview, { type: 'compaction' }>).compaction!;
    assert.equal(v.state, 'failed');
    assert.equal(v.note, 'block 0: server error');
  });
});

describe('host: approval broker', () => {
  const setup = (preview: ConstructorParameters<typeof ApprovalBroker>[0]['preview']) => {
    const posted: HostToWebview[] = [];
    const asked: string[] = [];
    const resolved: string[] = [];
    const broker = new ApprovalBroker({
      post: (m) => posted.push(m),
      preview,
      onAsked: (v) => asked.push(v.callId),
      onResolved: (id) => resolved.push(id),
    });
    return { broker, posted, asked, resolved };
  };
  const call = { id: 'call_1', tool: 'edit_file', args: { path: 'a.ts' }, summary: 'edit a.ts' };

  it('posts a card with the diff, waits for Approve, and hands the approved change to the tool once', async () => {
    const { broker, posted, asked, resolved } = setup(async () => ({
      kind: 'ask',
      detail: { summary: 'edit a.ts at line 3', path: 'a.ts', diff: '--- a/a.ts' },
      data: { after: 'new' },
    }));
    const decision = broker.request(call, new AbortController().signal);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(posted, [
      {
        type: 'approval-requested',
        approval: { callId: 'call_1', tool: 'edit_file', summary: 'edit a.ts at line 3', path: 'a.ts', diff: '--- a/a.ts' },
      },
    ]);
    assert.deepEqual(asked, ['call_1']);
    assert.equal(broker.views.length, 1);
    assert.deepEqual(broker.takeApproved('call_1'), { approved: false, data: undefined }, 'nothing is approved before the user says so');
    assert.ok(broker.approve('call_1'));
    assert.deepEqual(await decision, { approved: true });
    assert.deepEqual(posted[1], { type: 'approval-resolved', callId: 'call_1', approved: true });
    assert.deepEqual(resolved, ['call_1']);
    assert.deepEqual(broker.takeApproved('call_1'), { approved: true, data: { after: 'new' } });
    assert.deepEqual(broker.takeApproved('call_1'), { approved: false, data: undefined }, 'an approval is used once');
    assert.equal(broker.approve('call_1'), false, 'a second click does nothing');
  });

  it('passes the rejection reason to the agent and withdraws cards when the user stops', async () => {
    const { broker, posted } = setup(async () => ({ kind: 'ask', detail: { summary: 'run: rm -rf build', command: 'rm -rf build' } }));
    const d1 = broker.request({ ...call, id: 'c1', tool: 'run_command' }, new AbortController().signal);
    await new Promise((r) => setImmediate(r));
    broker.reject('c1', '  use the clean script  ');
    assert.deepEqual(await d1, { approved: false, reason: 'use the clean script' });
    const stop = new AbortController();
    const d2 = broker.request({ ...call, id: 'c2' }, stop.signal);
    await new Promise((r) => setImmediate(r));
    stop.abort();
    assert.deepEqual(await d2, { approved: false, reason: 'the user stopped the agent' });
    assert.deepEqual(
      posted.filter((m) => m.type === 'approval-resolved'),
      [
        { type: 'approval-resolved', callId: 'c1', approved: false },
        { type: 'approval-resolved', callId: 'c2', approved: false },
      ],
    );
    assert.equal(broker.views.length, 0);
  });

  it('does not ask about calls that cannot change anything', async () => {
    const { broker, posted } = setup(async () => ({ kind: 'noop' }));
    assert.deepEqual(await broker.request(call, new AbortController().signal), { approved: true });
    assert.deepEqual(posted, []);
    assert.equal(broker.takeApproved('call_1').approved, false, 'and the tool still refuses to write without an approval');
  });
});

describe('host: proposed edits and diffs', () => {
  it('renders a unified diff of an edit, with the line it starts on', () => {
    const c = proposeEdit('src/a.ts', 'one\ntwo\nthree\n', 'two', 'TWO');
    assert.ok(c.ok);
    assert.equal(c.after, 'one\nTWO\nthree\n');
    assert.equal(c.summary, 'edit src/a.ts at line 2');
    assert.match(c.diff, /^--- a\/src\/a\.ts\n\+\+\+ b\/src\/a\.ts\n@@ -1,3 \+1,3 @@\n one\n-two\n\+TWO\n three\n/);
  });

  it('refuses edits the tool could not apply, with the reason the model needs', () => {
    assert.match((proposeEdit('a', 'x x', 'x', 'y') as { error: string }).error, /more than once/);
    assert.match((proposeEdit('a', 'abc', 'zzz', 'y') as { error: string }).error, /not found/);
    assert.match((proposeEdit('a', undefined, 'x', 'y') as { error: string }).error, /write_file/);
    assert.match((proposeEdit('a', 'abc', 'b', 'b') as { error: string }).error, /same/);
  });

  it('matches \\n in old_text against a CRLF file and keeps its line endings', () => {
    const c = proposeEdit('w.txt', 'a\r\nb\r\nc\r\n', 'a\nb', 'a\nB');
    assert.ok(c.ok);
    assert.equal(c.after, 'a\r\nB\r\nc\r\n');
  });

  it('shows a new file against /dev/null and cuts huge diffs for the card', () => {
    const c = proposeWrite('new.md', undefined, '# hi\n');
    assert.ok(c.ok);
    assert.match(c.diff, /^--- \/dev\/null\n\+\+\+ b\/new\.md/);
    assert.equal(c.summary, 'create new.md (2 lines)');
    assert.match(unifiedDiff('big', '', 'x\n'.repeat(50_000)), /diff cut: \d+ more characters/);
    assert.equal((proposeWrite('same', 'a', 'a') as { ok: boolean }).ok, false);
  });
});

describe('host: user-facing texts', () => {
  it('names the URL and the setting when the server is down, and offers the settings', () => {
    const a = describeFailure({ kind: 'connection', url: 'http://gpu:8000/v1' }, 'Cannot connect…', 'http://localhost:8000/v1');
    assert.match(a.message, /http:\/\/gpu:8000\/v1/);
    assert.match(a.message, /splitpoint\.endpoint/);
    assert.deepEqual(a.actions, ['Open Settings', 'Show Log']);
    assert.equal(a.settingsQuery, 'splitpoint.endpoint');
  });

  it("says 'cannot reach' only when nothing answers: a dropped stream or an untrusted certificate keeps the client's words", () => {
    const text = 'The connection to http://gpu:8000/v1 was dropped (ECONNRESET): terminated: the server closed the response early';
    const a = describeFailure(new ConnectionError(text, 'ECONNRESET', { url: 'http://gpu:8000/v1' }), text, 'http://gpu:8000/v1');
    assert.equal(a.message, text);
    assert.doesNotMatch(a.message, /cannot reach/);
    const tls = 'The model server at https://gpu/v1 presented a TLS certificate … name its PEM file in the splitpoint.tls.caFile setting';
    const t = describeFailure(new ConnectionError(tls, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', { url: 'https://gpu/v1' }), tls, 'u');
    assert.equal(t.message, tls);
    assert.equal(t.settingsQuery, 'splitpoint.tls.caFile');
    for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']) {
      const refused = describeFailure(new ConnectionError('x', code, { url: 'http://gpu:8000/v1' }), 'x', 'u');
      assert.match(refused.message, /cannot reach the model server at http:\/\/gpu:8000\/v1/, code);
      assert.equal(refused.settingsQuery, 'splitpoint.endpoint');
    }
  });

  it('says compaction ran and retried when the server still refuses the length', () => {
    const a = describeFailure(
      undefined,
      'The server refused the request as too long: the request still exceeds the 8192-token window after compaction.',
      'u',
    );
    assert.match(a.message, /compacted the context and retried/);
    assert.match(describeFailure({ kind: 'context-overflow' }, 'x', 'u').message, /after Splitpoint compacted and retried/);
    assert.deepEqual(describeFailure({ kind: 'auth', url: 'u' }, 'x', 'u').actions, ['Set API Key', 'Show Log']);
  });

  it('colours the status bar gauge at hi and block', () => {
    const g = (used: number) => gaugeStatus({ used, window: 1000, hi: 0.75, lo: 0.4, block: 0.95 }, false);
    assert.deepEqual([g(500).level, g(750).level, g(949).level, g(950).level], ['normal', 'warning', 'warning', 'error']);
    assert.equal(g(500).text, '$(fold) 50%');
    assert.match(g(500).tooltip, /500 of 1,000 tokens \(50%\)/);
    assert.match(gaugeStatus(undefined, true).text, /loading~spin/);
    assert.match(g(500).tooltip, /Background compaction starts at 75%; the agent waits at 95%/);
    // With compaction.async off nothing starts at hi: the tooltip must not promise it.
    const off = gaugeStatus({ used: 500, window: 1000, hi: 0.75, lo: 0.4, block: 0.95 }, false, false).tooltip;
    assert.doesNotMatch(off, /starts at 75%/);
    assert.match(off, /Background compaction is off: at 95% the agent waits while the context is compacted/);
  });

  it('keeps secrets and long texts out of the log', () => {
    assert.equal(redactSecrets('401: Authorization: Bearer abcdefgh12345 rejected', []), '401: Authorization: Bearer [redacted] rejected');
    assert.equal(redactSecrets('key my-secret-key echoed', ['my-secret-key']), 'key [redacted] echoed');
    assert.equal(preview('a'.repeat(100), 10), '"aaaaaaaaaa"… (100 chars)');
    const cut = cutForView('x'.repeat(10_000), 1000);
    assert.ok(cut.truncated && cut.content.length < 1100 && /9000 characters not shown/.test(cut.content));
  });
});

describe('host: settings → agent loop', () => {
  it("bounds the compaction's summary volume by the user's lo, the level the side bar projects the context to", () => {
    const s = { ...defaultSettings(), thresholds: { hi: 0.8, lo: 0.25, block: 0.95 } };
    // lo is a fraction of the prompt's room, the window less the reply reserve; the planner's is of the window.
    assert.equal(agentSettingsFrom(s, 100_000).compaction.targetFraction, (0.25 * (100_000 - s.replyReserve)) / 100_000);
    const gauge = sessionGauge(50_000, { settings: s, contextWindow: 100_000 } as ControllerEnvironment);
    assert.equal(gauge.lo * 100_000, 0.25 * (100_000 - s.replyReserve), 'the gauge draws lo where the planner aims');
    assert.equal(gauge.block * 100_000, 0.95 * (100_000 - s.replyReserve), 'and block where the agent waits');
  });

  it('uses the agent model for the compactor (prefix cache) and the compactor model for the judge', () => {
    const s = readSettings((k) => (({ model: 'big' }) as Record<string, unknown>)[k]).settings;
    assert.deepEqual(modelChoice(s), { agent: 'big', compactor: 'big', judge: 'big' });
    const sep = readSettings((k) => (({ model: 'big', 'compaction.endpoint': 'http://c:1/v1' }) as Record<string, unknown>)[k]).settings;
    assert.deepEqual(modelChoice(sep), { agent: 'big', compactor: undefined, judge: undefined }, 'another server: its own first model');
  });

  it('maps every setting into the loop, and idle 0 means never', () => {
    const s = { ...defaultSettings(), idleMinutes: 0, mode: 'sequential' as const, blockTokens: 1024 };
    const a = agentSettingsFrom(s, 32768);
    assert.equal(a.contextWindow, 32768);
    assert.equal(a.compaction.contextWindow, 32768);
    assert.equal(a.compaction.mode, 'sequential');
    assert.equal(a.compaction.blockTokens, 1024);
    assert.equal(a.idle.idleMs, Number.POSITIVE_INFINITY);
    assert.deepEqual(a.judge, { enabled: true, threshold: 7, model: undefined });
    assert.equal(agentSettingsFrom(defaultSettings(), 4096).replyReserve, 2048, 'the reserve never takes more than half a small window');
  });
});

describe('host: session library', () => {
  const make = () => {
    const storage = new MemoryStorage();
    return { storage, lib: new SessionLibrary(storage, '/ws/sessions', fixedClock(), counterIds()) };
  };

  it('refuses session ids that are paths (switch-session comes from the webview)', async () => {
    const { storage, lib } = make();
    // A session log outside the library that a crafted id would reach.
    const outside = await lib.create();
    await storage.writeAtomic('/ws/secret.jsonl', (await storage.read(lib.pathFor(outside.id)))!);
    for (const id of ['../secret', '..', 'a/../../secret', '/ws/secret', 'sub\\..\\x', '']) {
      await assert.rejects(lib.open(id), /Invalid session id/, id);
    }
    assert.equal((await lib.open(outside.id)).snapshot.messages.length, 0, 'plain ids still open');
  });

  it('creates, lists newest first with titles and counts, and reopens sessions', async () => {
    const { lib } = make();
    const a = await lib.create();
    await a.store.append({ role: 'system', content: 'sys' });
    await a.store.append({ role: 'user', content: 'Fix the   flaky login test\nplease' });
    const b = await lib.create('Named');
    const list = await lib.list();
    assert.equal(list.length, 2);
    const ea = list.find((e) => e.id === a.id)!;
    assert.equal(ea.title, 'Fix the flaky login test please');
    assert.equal(ea.messageCount, 2);
    assert.equal(list.find((e) => e.id === b.id)!.title, 'Named');
    const reopened = await lib.open(a.id);
    assert.equal(reopened.snapshot.messages.length, 2);
  });

  it('lists a damaged file as damaged, and opening it fails with the line while the file stays as it was', async () => {
    const { storage, lib } = make();
    const a = await lib.create();
    await a.store.append({ role: 'user', content: 'hello' });
    const path = lib.pathFor(a.id);
    const broken = (await storage.read(path))! + '{"type":"message", oops\n';
    await storage.writeAtomic(path, broken);
    lib.invalidate(a.id);
    await assert.rejects(lib.open(a.id), /damaged at line 3/);
    assert.equal(await storage.read(path), broken, 'never overwritten');
    assert.ok(
      [...storage.files.keys()].some((k) => k.includes('.corrupt-')),
      'a backup was made',
    );
    assert.equal((await lib.list()).length, 1, 'the backup is not listed as a session');
    assert.equal(summarizeLog('x', 'p', 'not json').damaged, 'the first line is not JSON');
  });

  it('imports a plain OpenAI array and a Splitpoint log, and refuses a broken log without writing', async () => {
    const { storage, lib } = make();
    const arr = await lib.importText(
      JSON.stringify([
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ]),
      '/tmp/chat.json',
    );
    assert.equal(arr.kind, 'messages');
    assert.equal(arr.store.snapshot.messages.length, 3);
    assert.equal(arr.store.snapshot.title, 'Imported: chat');
    const logText = (await storage.read(arr.store.path))!;
    const again = await lib.importText(logText, '/tmp/x.jsonl');
    assert.equal(again.kind, 'log');
    assert.notEqual(again.id, arr.id);
    const before = storage.files.size;
    await assert.rejects(lib.importText(logText + 'garbage\n', '/tmp/bad.jsonl'), /bad\.jsonl is damaged at line 5/);
    await assert.rejects(lib.importText('{"nope": 1}', '/tmp/o.json'), /Cannot import/);
    assert.equal(storage.files.size, before, 'nothing written for bad input');
  });
});
