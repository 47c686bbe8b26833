import assert from 'node:assert/strict';
import type { CompactionView, ViewMessage } from '../../src/protocol/messages';
import { droppedBlockText, isReviewToHost, lossHeadline } from '../../src/protocol/review';
import { identifierFacts, identifierLoss } from '../../src/host/review/identifierLoss';
import { hostMessageFor, ReviewBridge } from '../../src/host/review/reviewBridge';
import { makeSnapshot, makeCompaction } from '../webview/snapshot';

const msg = (index: number, content: string, role: ViewMessage['role'] = 'assistant'): ViewMessage => ({ id: `m${index}`, index, role, kind: 'normal', origin: 'tail', tokens: 10, content, truncated: false });

describe('review editor: loss report fallback (identifiers)', () => {
  it('extracts paths, exception names and identifiers a reader could not guess back, each once', () => {
    const facts = identifierFacts('Edit src/db/migrate.ts: runMigration threw TypeError; users_table and MAX_ROWS stay; see migrate.ts and runMigration again. plain words.');
    assert.deepEqual(facts, [
      { kind: 'path', key: 'src/db/migrate.ts' },
      { kind: 'error', key: 'TypeError' },
      { kind: 'identifier', key: 'runMigration' },
      { kind: 'identifier', key: 'users_table' },
      { kind: 'identifier', key: 'MAX_ROWS' },
    ]);
  });

  it('reports exactly the facts of summarised blocks that their summary lacks, with the message they came from', () => {
    const messages = [msg(0, 'system prompt with someIdent', 'system'), msg(1, 'call runMigration on users_table'), msg(2, 'TypeError in src/a/b.ts'), msg(3, 'later fooBar')];
    const c: CompactionView = {
      ...makeCompaction(makeSnapshot(10), 2),
      blocks: [
        { index: 0, firstMessage: 1, lastMessage: 2, tokens: 20, status: 'done', streamedTokens: 0, summary: 'ran runMigration; TypeError seen', error: null, stats: null },
        { index: 1, firstMessage: 3, lastMessage: 3, tokens: 10, status: 'queued', streamedTokens: 0, summary: null, error: null, stats: null },
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
});

describe('review editor: bridge between the host and the panel', () => {
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
    assert.equal(bridge.onHostPost({ type: 'assistant-delta', text: 'x' }), null);
    assert.deepEqual(bridge.onHostPost({ type: 'notice', level: 'warning', text: 'w' }), { type: 'review-notice', level: 'warning', text: 'w' });
    const done = bridge.onHostPost({ type: 'compaction', compaction: { ...c, state: 'adopted' } });
    assert.ok(done?.type === 'review-state' && done.state.loss === null, 'no loss report once adopted');
  });

  it('shows the measured time when no planner prediction exists', () => {
    const snap = makeSnapshot(20);
    const c = { ...makeCompaction(snap, 2), totals: { summaryTokens: 10, compressionRatio: 5, inputTokens: 100, outputTokens: 10, cachedTokens: 0, wallMs: 1234 } };
    const bridge = new ReviewBridge();
    bridge.fromSnapshot({ ...snap, compaction: c });
    assert.deepEqual(bridge.current!.plan, { compactionId: c.id, mode: '', layout: '', blockTokens: null, concurrency: null, predictedMs: null, measuredMs: 1234, candidates: [] });
  });

  it('maps every editor request to the host message the side bar would send', () => {
    assert.equal(hostMessageFor({ type: 'review-ready' }), null);
    assert.deepEqual(hostMessageFor({ type: 'review-compact', focus: 'f' }), { type: 'compact', focus: 'f', tailStartIndex: null });
    assert.deepEqual(hostMessageFor({ type: 'review-edit', compactionId: 'c', block: 1, text: 't' }), { type: 'block-edit', compactionId: 'c', block: 1, text: 't' });
    assert.deepEqual(hostMessageFor({ type: 'review-regenerate', compactionId: 'c', block: 1, focus: null }), { type: 'block-regenerate', compactionId: 'c', block: 1 });
    assert.deepEqual(hostMessageFor({ type: 'review-regenerate', compactionId: 'c', block: 1, focus: 'keep x' }), { type: 'block-regenerate', compactionId: 'c', block: 1, focus: 'keep x' });
    assert.deepEqual(hostMessageFor({ type: 'review-adopt', compactionId: 'c' }), { type: 'compaction-adopt', compactionId: 'c' });
    assert.deepEqual(hostMessageFor({ type: 'review-cancel', compactionId: 'c' }), { type: 'compaction-cancel', compactionId: 'c' });
    assert.deepEqual(hostMessageFor({ type: 'review-pin', text: 'x', messageId: 'm1' }), { type: 'pin', text: 'x', kind: 'constraint', messageId: 'm1' });
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
