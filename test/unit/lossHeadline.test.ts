import assert from 'node:assert/strict';
import { CompactionTracker } from '../../src/host/compactionTracker';
import { lossHeadline } from '../../src/host/review/lossHeadline';
import type { CompactionView, ViewMessage } from '../../src/protocol/messages';
import { BLOCK_STATS } from './helpers/blockStats';

/** Issue 14.7: the side bar's compaction panel shows what would be lost before Adopt, from the real fact extractor. */
function msg(index: number, role: ViewMessage['role'], content: string): ViewMessage {
  return { id: `m${index}`, index, role, kind: 'normal', origin: 'tail', tokens: 50, content, truncated: false };
}

const messages: ViewMessage[] = [
  msg(0, 'system', 'You are a coding agent.'),
  msg(1, 'user', 'Fix the failing test in src/server/retry.ts and keep maxRetries at 5.'),
  msg(2, 'assistant', 'The run failed with: Error: ECONNRESET in fetchWithRetry. DECISION: wrap the socket in a retry loop.'),
  msg(3, 'user', 'Carry on.'),
];

function ready(
  summary: string,
  o: {
    wantsDeltas?: () => boolean;
    computed?: { n: number };
    sent?: CompactionView[];
    loss?: (v: CompactionView) => ReturnType<typeof lossHeadline>;
    failed?: unknown[];
  } = {},
): CompactionView {
  const t = new CompactionTracker({
    pins: () => [],
    judgeEnabled: () => false,
    loss: o.loss ?? ((v) => (o.computed && o.computed.n++, lossHeadline(messages, v))),
    lossFailed: (e) => o.failed?.push(e),
    ...(o.wantsDeltas ? { wantsDeltas: o.wantsDeltas } : {}),
  });
  t.start('c1', false, undefined, true);
  const blk = {
    index: 0,
    firstMessage: 1,
    lastMessage: 2,
    tokens: 100,
    status: 'queued' as const,
    streamedTokens: 0,
    summary: undefined,
    error: undefined,
    stats: undefined,
  };
  t.onCompactionEvent({
    type: 'planned',
    compactionId: 'c1',
    blocks: [blk],
    headTokens: 100,
    tailStartIndex: blk.lastMessage + 1,
    headingTokens: 0,
    layout: 'target-block',
    mode: 'sequential',
    focus: undefined,
  });
  const stats = BLOCK_STATS;
  t.onCompactionEvent({ type: 'block-done', compactionId: 'c1', block: 0, summary, stats });
  const totals = {
    headTokens: 100,
    summaryTokens: 20,
    inputTokens: 100,
    outputTokens: 20,
    cachedTokens: 0,
    compressionRatio: 5,
    wallMs: 10,
    requests: 1,
    maxInFlight: 1,
  };
  const checks = { missingPins: [], openLoopsBefore: 0, openLoopsAfter: 0, openLoopsDropped: false, grows: false };
  for (const m of t.onCompactionEvent({ type: 'ready', compactionId: 'c1', totals, checks }))
    if (m.type === 'compaction' && m.compaction) o.sent?.push(m.compaction);
  return t.current!;
}

describe('the loss report in brief (side bar, before Adopt)', () => {
  it('is filled when every block has a summary and names what the summary dropped, each with its message', () => {
    const c = ready('FACTS:\n- src/server/retry.ts: maxRetries stays 5');
    const loss = c.loss!;
    assert.ok(loss.dropped > 0);
    assert.match(loss.headline, /^Dropped \d+ of \d+ facts: /);
    const keys = loss.first.map((f) => f.key);
    assert.ok(
      keys.some((k) => /ECONNRESET/.test(k)),
      `the error is reported as dropped: ${keys.join(', ')}`,
    );
    assert.ok(!keys.includes('src/server/retry.ts'), 'a path the summary kept is not reported');
    const err = loss.first.find((f) => /ECONNRESET/.test(f.key))!;
    assert.equal(err.messageId, 'm2');
    assert.equal(err.messageIndex, 2);
    assert.ok(loss.first.length <= 5);
  });

  // The UI review saw one dropped sentence listed three times (error line, decision, path), each with its own Keep.
  it('lists each dropped line once, with the kinds and keys of its facts joined', () => {
    const c = ready('FACTS:\n- nothing kept');
    const first = c.loss!.first;
    const texts = first.map((f) => `${f.messageId}\n${f.text}`);
    assert.equal(new Set(texts).size, texts.length, `a line is listed once: ${JSON.stringify(first)}`);
    // Message 1's one sentence names a path, an identifier and says what to do: three facts, one line.
    const line = first.find((f) => f.messageId === 'm1')!;
    assert.deepEqual(line.kind.split(', ').sort(), ['identifier', 'instruction', 'path'], JSON.stringify(first));
    assert.deepEqual(line.key.split(' · ').sort(), ['maxRetries', 'src/server/retry.ts']);
    assert.ok(c.loss!.dropped > first.length, 'the count is of facts, as the headline says');
  });

  it('says nothing was dropped when the summary carries every fact', () => {
    const all = messages
      .slice(1, 3)
      .map((m) => m.content)
      .join('\n');
    const c = ready(all);
    assert.equal(c.loss!.dropped, 0);
    assert.match(c.loss!.headline, /^No fact dropped/);
  });

  it('a report that throws leaves the compaction ready without one, and says so to the host', () => {
    for (const wantsDeltas of [() => true, () => false]) {
      const failed: unknown[] = [];
      const sent: CompactionView[] = [];
      const boom = () => {
        throw new RangeError('Maximum call stack size exceeded');
      };
      const c = ready('Fixed src/server/retry.ts.', { loss: boom, failed, sent, wantsDeltas });
      assert.equal(sent[0]!.state, 'ready');
      assert.equal(c.state, 'ready');
      assert.equal(c.loss, null);
      assert.equal(failed.length, 1);
      assert.match(String(failed[0]), /Maximum call stack/);
    }
  });

  it('with no view to see it, the report waits for the next snapshot, and is computed once then', () => {
    const computed = { n: 0 };
    const sent: CompactionView[] = [];
    const c = ready('Fixed src/server/retry.ts.', { wantsDeltas: () => false, computed, sent });
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.state, 'ready');
    assert.equal(sent[0]!.loss, null, 'the delta nobody sees carries no report');
    // `ready()` returned the tracker's current view, which a snapshot reads: the report is there, computed once.
    assert.equal(computed.n, 1);
    assert.ok(c.loss && c.loss.dropped > 0, 'the snapshot carries the report');
    const seen = { n: 0 };
    ready('Fixed src/server/retry.ts.', { wantsDeltas: () => true, computed: seen, sent: [] });
    assert.equal(seen.n, 1, 'with a view, computed when the compaction is ready');
  });
});
