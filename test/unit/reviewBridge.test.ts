import assert from 'node:assert/strict';
import type { CompactionView, ViewMessage } from '../../src/protocol/messages';
import {
  droppedBlockText,
  droppedCount,
  isDroppedBlockText,
  isReviewToHost,
  LISTED_PER_MESSAGE,
  lossHeadline,
} from '../../src/protocol/review';
import { lossHeadline as lossHeadlineView } from '../../src/host/review/lossHeadline';
import { identifierFacts, identifierLoss } from '../../src/host/review/identifierLoss';
import { fidelityLoss } from '../../src/host/review/fidelityLoss';
import { bridgeOnFullTexts, hostMessageFor, planOf, ReviewBridge } from '../../src/host/review/reviewBridge';
import { cutForView } from '../../src/host/viewModel';
import { CompactionTracker, planView } from '../../src/host/compactionTracker';
import { makeSnapshot, makeCompaction } from '../webview/snapshot';

const msg = (index: number, content: string, role: ViewMessage['role'] = 'assistant'): ViewMessage => ({
  id: `m${index}`,
  index,
  role,
  kind: 'normal',
  origin: 'tail',
  tokens: 10,
  content,
  truncated: false,
});

describe('review editor: loss report fallback (identifiers)', () => {
  it('extracts paths, exception names and identifiers a reader could not guess back, each once', () => {
    const facts = identifierFacts(
      'Edit src/db/migrate.ts: runMigration threw TypeError; users_table and MAX_ROWS stay; see migrate.ts and runMigration again. plain words.',
    );
    assert.deepEqual(facts, [
      { kind: 'path', key: 'src/db/migrate.ts' },
      { kind: 'error', key: 'TypeError' },
      { kind: 'identifier', key: 'runMigration' },
      { kind: 'identifier', key: 'users_table' },
      { kind: 'identifier', key: 'MAX_ROWS' },
    ]);
  });

  it('reports exactly the facts of summarised blocks that their summary lacks, with the message they came from', () => {
    const messages = [
      msg(0, 'system prompt with someIdent', 'system'),
      msg(1, 'call runMigration on users_table'),
      msg(2, 'TypeError in src/a/b.ts'),
      msg(3, 'later fooBar'),
    ];
    const c: CompactionView = {
      ...makeCompaction(makeSnapshot(10), 2),
      blocks: [
        {
          index: 0,
          firstMessage: 1,
          lastMessage: 2,
          tokens: 20,
          status: 'done',
          streamedTokens: 0,
          summary: 'ran runMigration; TypeError seen',
          error: null,
          stats: null,
        },
        {
          index: 1,
          firstMessage: 3,
          lastMessage: 3,
          tokens: 10,
          status: 'queued',
          streamedTokens: 0,
          summary: null,
          error: null,
          stats: null,
        },
      ],
    };
    const r = identifierLoss(messages, c);
    assert.equal(r.total, 5, 'runMigration, users_table, TypeError, src/a/b.ts, fooBar (the system prompt is not compacted)');
    assert.deepEqual(
      r.dropped.map((f) => [f.kind, f.key, f.messageId, f.block]),
      [
        ['identifier', 'users_table', 'm1', 0],
        ['path', 'src/a/b.ts', 'm2', 0],
      ],
    );
    assert.equal(lossHeadline(r), 'Dropped 2 of 5 facts: 1 identifier, 1 path');
  });

  it('a bare file name after its path, or a name inside a path, is the path; the same name alone elsewhere is its own', () => {
    assert.deepEqual(identifierFacts('read lib/parseHeader.ts then db/migrate.ts, migrate.ts and parseHeader.ts; fix parseHeader'), [
      { kind: 'path', key: 'lib/parseHeader.ts' },
      { kind: 'path', key: 'db/migrate.ts' },
      { kind: 'identifier', key: 'parseHeader' },
    ]);
  });

  // This report is what the editor shows when the fidelity scan throws, so it must not throw or hang on the same
  // input: an imported session can hold a tool output of one 10 MB line. Its own patterns threw on the first
  // (regex backtracking stack), ran for minutes on the next three (a path pattern retried from every position),
  // and compared every name with every name found before it.
  it('takes one-line tool outputs of 10 MB and tens of thousands of distinct names', () => {
    const huge = 10_000_000;
    assert.deepEqual(identifierFacts('a/'.repeat(huge / 2)), []);
    assert.deepEqual(identifierFacts('a'.repeat(huge)), []);
    assert.ok(identifierFacts('aB'.repeat(huge / 2)).every((f) => f.kind === 'identifier' && /^(aB)+$/.test(f.key)));
    assert.ok(identifierFacts('a_'.repeat(huge / 2)).length <= 1);
    const names = Array.from({ length: 100_000 }, (_, i) => `someName${i}x`);
    const facts = identifierFacts(`${names.join(' ')} src/x/y.ts y.ts`);
    assert.equal(facts.length, names.length + 1);
    assert.deepEqual(facts[0], { kind: 'path', key: 'src/x/y.ts' });
    assert.deepEqual(
      facts.slice(1).map((f) => f.key),
      names,
    );
  });
});

describe('review editor: a loss report of a very long output', () => {
  // A minified bundle read into one line: tens of thousands of names, none of which a short summary repeats.
  it('counts every dropped fact but lists at most LISTED_PER_MESSAGE of one message, so the report stays small', () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `someName${i}x`).join(' ');
    const snap = makeSnapshot(40);
    const k = snap.messages.findIndex((m, i) => i > 0 && m.role !== 'system');
    const messages = snap.messages.map((m, i) => (i === k ? { ...m, role: 'tool' as const, toolCallId: 'read_1', content: names } : m));
    const c = makeCompaction({ ...snap, messages }, 3);
    const done = { ...c, blocks: c.blocks.map((b) => ({ ...b, status: 'done' as const, summary: 'read the bundle' })) };
    const r = fidelityLoss(messages, done);
    const fromIt = r.dropped.filter((f) => f.messageId === messages[k]!.id);
    assert.equal(fromIt.length, LISTED_PER_MESSAGE);
    assert.ok(r.droppedByKind.identifier! >= 20_000, `identifiers counted: ${r.droppedByKind.identifier}`);
    assert.equal(
      droppedCount(r),
      Object.values(r.droppedByKind).reduce((a, n) => a + n!, 0),
    );
    assert.match(lossHeadline(r), new RegExp(`^Dropped ${droppedCount(r)} of ${r.total} facts: ${r.droppedByKind.identifier} identifiers`));
    assert.ok(JSON.stringify(r).length < 200_000, `report of ${JSON.stringify(r).length} characters`);
    assert.equal(lossHeadlineView(messages, done)!.dropped, droppedCount(r), "the side bar's count is the whole count");
  });
});

describe('review editor: dropped blocks', () => {
  it('knows the drop placeholder whatever its message numbers (a first pin renumbers them after the drop)', () => {
    assert.ok(isDroppedBlockText(droppedBlockText(12, 40)));
    assert.ok(isDroppedBlockText(droppedBlockText(13, 41)));
    assert.ok(!isDroppedBlockText(`Summary: ${droppedBlockText(12, 40)}`));
    assert.ok(!isDroppedBlockText('(Messages 12–40 were dropped.)'));
    assert.ok(!isDroppedBlockText(null));
  });
});

describe('review editor: bridge between the host and the panel', () => {
  it("judges a cut tool output's whole text, and still sends the editor the cut copy", () => {
    const lines = Array.from({ length: 400 }, (_, i) => (i === 200 ? 'ConnectionResetError in src/db/pool.ts' : `ok line ${i} of the run`));
    const full = lines.join('\n');
    const snap = makeSnapshot(40);
    const cut = cutForView(full);
    const k = snap.messages.findIndex((m, i) => i > 0 && m.role !== 'system');
    const shown = { ...snap.messages[k]!, role: 'tool' as const, toolCallId: 'run_1', ...cut };
    const messages = snap.messages.map((m, i) => (i === k ? shown : m));
    const c = makeCompaction({ ...snap, messages }, 3);
    const done = { ...c, blocks: c.blocks.map((b) => ({ ...b, status: 'done' as const, summary: 'ran the tests' })) };
    const lostIn = (bridge: ReviewBridge) => bridge.current!.loss!.dropped.filter((f) => f.messageId === shown.id).map((f) => f.key);
    const whole = bridgeOnFullTexts(() => (id) => (id === shown.id ? full : undefined));
    whole.fromSnapshot({ ...snap, messages, compaction: done });
    assert.ok(cut.truncated && !cut.content.includes('ConnectionResetError'));
    assert.deepEqual(lostIn(whole).sort(), ['ConnectionResetError', 'ConnectionResetError', 'src/db/pool.ts'].sort());
    assert.equal(whole.current!.messages[k]!.content, cut.content, 'the editor gets the cut copy');
    const viewOnly = new ReviewBridge();
    viewOnly.fromSnapshot({ ...snap, messages, compaction: done });
    assert.deepEqual(lostIn(viewOnly), [], 'judged on the cut copy, the error line is not there to be lost');
  });

  it('builds a state from a snapshot, patches block deltas, recomputes the loss report and drops other compactions', () => {
    const snap = makeSnapshot(40);
    const c = makeCompaction(snap, 3);
    const bridge = new ReviewBridge();
    const first = bridge.fromSnapshot({ ...snap, compaction: c });
    assert.equal(first.type, 'review-state');
    assert.equal(bridge.current!.loss!.dropped.length, 0, 'nothing is lost before any summary exists');
    const b0 = { ...c.blocks[0]!, status: 'done' as const, summary: 'nothing specific' };
    const out = bridge.onHostPost({ type: 'block', compactionId: c.id, block: b0 });
    assert.equal(out?.type, 'review-block');
    assert.ok(out?.type === 'review-block' && out.loss!.dropped.length > 0 && out.loss!.dropped.every((f) => f.block === 0));
    assert.equal(bridge.current!.compaction!.blocks[0], b0);
    assert.equal(bridge.onHostPost({ type: 'block', compactionId: 'other', block: b0 }), null);
    // Progress patches the blocks and is passed on without the loss report, which it cannot change.
    const lossBefore = bridge.current!.loss;
    const progress = [
      { index: 1, streamedTokens: 48 },
      { index: 2, streamedTokens: 16 },
    ];
    assert.deepEqual(bridge.onHostPost({ type: 'block-progress', compactionId: c.id, progress }), {
      type: 'review-progress',
      compactionId: c.id,
      progress,
    });
    assert.deepEqual(
      bridge.current!.compaction!.blocks.map((b) => [b.status, b.streamedTokens]),
      [
        ['done', c.blocks[0]!.streamedTokens],
        ['streaming', 48],
        ['streaming', 16],
      ],
    );
    assert.equal(bridge.current!.loss, lossBefore, 'the loss report was not recomputed');
    assert.equal(bridge.onHostPost({ type: 'block-progress', compactionId: 'other', progress }), null);
    assert.equal(bridge.onHostPost({ type: 'assistant-delta', text: 'x' }), null);
    assert.deepEqual(bridge.onHostPost({ type: 'notice', level: 'warning', text: 'w' }), {
      type: 'review-notice',
      level: 'warning',
      text: 'w',
    });
    const done = bridge.onHostPost({ type: 'compaction', compaction: { ...c, state: 'adopted' } });
    assert.ok(done?.type === 'review-state' && done.state.loss === null, 'no loss report once adopted');
  });

  it('shows the measured time when no planner prediction exists', () => {
    const snap = makeSnapshot(20);
    const c = {
      ...makeCompaction(snap, 2),
      totals: { summaryTokens: 10, compressionRatio: 5, inputTokens: 100, outputTokens: 10, cachedTokens: 0, wallMs: 1234 },
    };
    const bridge = new ReviewBridge();
    bridge.fromSnapshot({ ...snap, compaction: c });
    assert.deepEqual(bridge.current!.plan, {
      compactionId: c.id,
      mode: '',
      layout: '',
      blockTokens: null,
      concurrency: null,
      predictedMs: null,
      measuredMs: 1234,
      candidates: [],
    });
  });

  it('maps every editor request to the host message the side bar would send', () => {
    assert.equal(hostMessageFor({ type: 'review-ready' }), null);
    assert.deepEqual(hostMessageFor({ type: 'review-compact', focus: 'f' }), { type: 'compact', focus: 'f', tailStartIndex: null });
    assert.deepEqual(hostMessageFor({ type: 'review-edit', compactionId: 'c', block: 1, text: 't' }), {
      type: 'block-edit',
      compactionId: 'c',
      block: 1,
      text: 't',
    });
    assert.deepEqual(hostMessageFor({ type: 'review-regenerate', compactionId: 'c', block: 1, focus: null }), {
      type: 'block-regenerate',
      compactionId: 'c',
      block: 1,
    });
    assert.deepEqual(hostMessageFor({ type: 'review-regenerate', compactionId: 'c', block: 1, focus: 'keep x' }), {
      type: 'block-regenerate',
      compactionId: 'c',
      block: 1,
      focus: 'keep x',
    });
    assert.deepEqual(hostMessageFor({ type: 'review-adopt', compactionId: 'c' }), { type: 'compaction-adopt', compactionId: 'c' });
    assert.deepEqual(hostMessageFor({ type: 'review-cancel', compactionId: 'c' }), { type: 'compaction-cancel', compactionId: 'c' });
    assert.deepEqual(hostMessageFor({ type: 'review-pin', text: 'x', messageId: 'm1' }), {
      type: 'pin',
      text: 'x',
      kind: 'constraint',
      messageId: 'm1',
    });
  });

  it('rejects malformed editor messages', () => {
    assert.ok(isReviewToHost({ type: 'review-edit', compactionId: 'c', block: 0, text: 'x' }));
    assert.ok(!isReviewToHost({ type: 'review-edit', compactionId: 'c', block: -1, text: 'x' }));
    assert.ok(!isReviewToHost({ type: 'review-edit', compactionId: 'c', block: 1.5, text: 'x' }));
    assert.ok(!isReviewToHost({ type: 'review-regenerate', compactionId: 'c', block: 0 }));
    assert.ok(!isReviewToHost({ type: 'block-edit', compactionId: 'c', block: 0, text: 'x' }));
    assert.ok(!isReviewToHost(null));
    assert.match(droppedBlockText(3, 9), /Messages 3–9 were dropped/);
  });
});

describe('review editor: loss report from the fidelity module', () => {
  it('judges facts only of blocks with a summary, keeps those any summary names exactly, and points at the active message', () => {
    const messages = [
      msg(0, 'You are an agent.', 'system'),
      msg(1, 'Set the timeout to 30 s in config/app.yaml and never touch users_table.', 'user'),
      msg(2, 'FAILED test_migrate_batches - AssertionError: 3 != 4', 'tool'),
      msg(3, 'Later: rename fooBarBaz.', 'user'),
    ];
    const base = makeCompaction(makeSnapshot(10), 2);
    const c: CompactionView = {
      ...base,
      blocks: [
        {
          index: 0,
          firstMessage: 1,
          lastMessage: 2,
          tokens: 20,
          status: 'done',
          streamedTokens: 0,
          summary: 'Timeout 30 s in config/app.yaml.',
          error: null,
          stats: null,
        },
        {
          index: 1,
          firstMessage: 3,
          lastMessage: 3,
          tokens: 10,
          status: 'queued',
          streamedTokens: 0,
          summary: null,
          error: null,
          stats: null,
        },
      ],
    };
    const r = fidelityLoss(messages, c);
    assert.equal(r.source, 'fidelity');
    const keys = r.dropped.map((f) => f.key);
    assert.ok(keys.includes('users_table'), `users_table is lost: ${keys.join(', ')}`);
    assert.ok(
      keys.some((k) => k.includes('test_migrate_batches')),
      'the failing test is lost',
    );
    assert.ok(!keys.includes('config/app.yaml'), 'a path the summary names is kept');
    assert.ok(!keys.includes('fooBarBaz'), 'block 2 has no summary yet: not judged');
    assert.ok(r.total > r.dropped.length);
    for (const f of r.dropped) {
      assert.equal(f.block, 0);
      assert.equal(messages[f.messageIndex]!.id, f.messageId);
    }

    // The head's facts are remembered across calls with freshly built lists (each compaction's report), and
    // extracted again as soon as anything extraction reads differs: content, a tool call, the partition.
    assert.deepEqual(fidelityLoss([...messages.map((m) => ({ ...m }))], c), r);
    const edited = messages.map((m, i) => (i === 2 ? { ...m, content: `${m.content}\nERROR orders_index is corrupt` } : m));
    const afterEdit = fidelityLoss(edited, c).dropped.map((f) => f.key);
    assert.ok(afterEdit.includes('orders_index'), `a fact added to the head is seen: ${afterEdit.join(', ')}`);
    const wider = { ...c, blocks: c.blocks.map((b, i) => (i === 0 ? { ...b, lastMessage: 3, summary: b.summary } : b)).slice(0, 1) };
    const afterRepartition = fidelityLoss(messages, wider).dropped.map((f) => f.key);
    assert.ok(afterRepartition.includes('fooBarBaz'), `the message that joined block 0 is judged: ${afterRepartition.join(', ')}`);
  });
});

describe('review editor: the plan, predicted against measured', () => {
  it("carries the planner's choice and alternatives into the view, and the measured time", () => {
    const opt = (label: string, predictedMs: number, layout: 'cache-aligned' | 'target-block', excluded?: string) => ({
      label,
      mode: 'parallel' as const,
      layout,
      blockTokens: 4096,
      blocks: 29,
      concurrency: 64,
      summaryTokens: 9000,
      predictedMs,
      ...(excluded ? { excluded } : {}),
    });
    const pv = planView({
      chosen: opt('target-block 4096 ×64', 9600, 'target-block'),
      alternatives: [opt('cache-aligned 4096 ×8', 47000, 'cache-aligned', 'slows the agent 2.3×')],
      profile: { name: 'h100-7b', source: 'calibration' },
      cache: 'cold',
      background: false,
      replicas: 1,
      forced: [],
    });
    const c: CompactionView = { ...makeCompaction(makeSnapshot(20), 2), plan: { ...pv, measuredMs: 10_100 } };
    const p = planOf(c)!;
    assert.deepEqual(
      {
        mode: p.mode,
        layout: p.layout,
        blockTokens: p.blockTokens,
        concurrency: p.concurrency,
        predictedMs: p.predictedMs,
        measuredMs: p.measuredMs,
      },
      { mode: 'parallel', layout: 'target-block', blockTokens: 4096, concurrency: 64, predictedMs: 9600, measuredMs: 10_100 },
    );
    assert.deepEqual(p.candidates, [
      { label: 'target-block 4096 ×64', predictedMs: 9600, chosen: true },
      { label: 'cache-aligned 4096 ×8 (ruled out: slows the agent 2.3×)', predictedMs: 47000, chosen: false },
    ]);
    assert.equal(pv.profile, 'h100-7b (calibration)');
  });

  it('the tracker keeps the plan of the planned event and records the measured time on ready', () => {
    const t = new CompactionTracker({ pins: () => [], judgeEnabled: () => false });
    t.start('c1', false, undefined, false);
    const o = {
      label: 'sequential',
      mode: 'sequential' as const,
      layout: 'target-block' as const,
      blockTokens: 3000,
      blocks: 1,
      concurrency: 1,
      summaryTokens: 500,
      predictedMs: 2000,
    };
    const plan = {
      chosen: o,
      alternatives: [],
      profile: { name: 'unit', source: 'test' },
      cache: 'cold' as const,
      background: false,
      replicas: 1,
      forced: [],
    };
    const blk = {
      index: 0,
      firstMessage: 1,
      lastMessage: 2,
      tokens: 3000,
      status: 'queued' as const,
      streamedTokens: 0,
      summary: undefined,
      error: undefined,
      stats: undefined,
    };
    const planned = t.onCompactionEvent({
      type: 'planned',
      compactionId: 'c1',
      blocks: [blk],
      headTokens: 3000,
      tailStartIndex: blk.lastMessage + 1,
      headingTokens: 0,
      layout: 'target-block',
      mode: 'sequential',
      focus: undefined,
      plan,
    });
    assert.equal((planned[0] as { compaction: CompactionView }).compaction.plan!.chosen.predictedMs, 2000);
    t.onCompactionEvent({
      type: 'block-done',
      compactionId: 'c1',
      block: 0,
      summary: 'S',
      stats: {
        inputTokens: 3000,
        outputTokens: 100,
        cachedTokens: undefined,
        ms: 2300,
        endpoint: 0,
        usageReported: true,
        queuedMs: 0,
        instructionTokens: 50,
        attempts: 1,
        trimmed: false,
      },
    });
    const totals = {
      headTokens: 3000,
      summaryTokens: 100,
      inputTokens: 3000,
      outputTokens: 100,
      cachedTokens: 0,
      compressionRatio: 30,
      wallMs: 2400,
      requests: 1,
      maxInFlight: 1,
    };
    const outcome = { label: 'sequential', predictedMs: 2000, measuredMs: 2350, ratio: 1.175, summaryTokens: 100 };
    const ready = t.onCompactionEvent({
      type: 'ready',
      compactionId: 'c1',
      totals,
      checks: { missingPins: [], openLoopsBefore: 0, openLoopsAfter: 0, openLoopsDropped: false, grows: false },
      outcome,
    });
    assert.equal((ready[0] as { compaction: CompactionView }).compaction.plan!.measuredMs, 2350);
  });
});
