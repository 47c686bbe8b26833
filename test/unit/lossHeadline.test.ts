import assert from 'node:assert/strict';
import { CompactionTracker } from '../../src/host/compactionTracker';
import { lossHeadline } from '../../src/host/review/lossHeadline';
import type { CompactionView, ViewMessage } from '../../src/protocol/messages';

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

function ready(summary: string): CompactionView {
  const t = new CompactionTracker({
    pins: () => [],
    judgeEnabled: () => false,
    loss: (v) => lossHeadline(messages, v),
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
    layout: 'target-block',
    mode: 'sequential',
    focus: undefined,
  });
  const stats = {
    inputTokens: 100,
    outputTokens: 20,
    cachedTokens: undefined,
    ms: 10,
    queuedMs: 0,
    instructionTokens: 5,
    attempts: 1,
    trimmed: false,
  };
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
  t.onCompactionEvent({ type: 'ready', compactionId: 'c1', totals, checks });
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

  it('says nothing was dropped when the summary carries every fact', () => {
    const all = messages
      .slice(1, 3)
      .map((m) => m.content)
      .join('\n');
    const c = ready(all);
    assert.equal(c.loss!.dropped, 0);
    assert.match(c.loss!.headline, /^No fact dropped/);
  });
});
