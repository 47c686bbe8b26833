/**
 * "Keep this (pin)" on a dropped fact puts its text in the pinned block, which compaction carries verbatim: the loss
 * report (side bar and review editor alike) stops calling the fact dropped, before Adopt and after it.
 */
import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { fidelityLoss } from '../../src/host/review/fidelityLoss';
import { identifierLoss } from '../../src/host/review/identifierLoss';
import { ReviewBridge } from '../../src/host/review/reviewBridge';
import { SessionController } from '../../src/host/sessionController';
import type { CompactionView, HostToWebview, ViewMessage } from '../../src/protocol/messages';
import { droppedCount, lossHeadline } from '../../src/protocol/review';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

function msg(index: number, role: ViewMessage['role'], content: string, kind: ViewMessage['kind'] = 'normal'): ViewMessage {
  return { id: `m${index}`, index, role, kind, origin: 'tail', tokens: 50, content, truncated: false };
}

const said = [
  'Fix the failing test in src/server/retry.ts and keep maxRetries at 5.',
  'The run failed with: Error: ECONNRESET in fetchWithRetry. DECISION: wrap the socket in a retry loop.',
  'Carry on.',
];
/** The context before the pin: system, then the conversation; after it the pinned block sits at index 1. */
const before = [msg(0, 'system', 'You are a coding agent.'), ...said.map((t, i) => msg(i + 1, i % 2 ? 'assistant' : 'user', t))];
const pinnedBlock = (text: string) =>
  msg(1, 'user', `PINNED (hard constraints and open loops; they hold for the whole session):\nConstraints:\n- ${text}`, 'pinned');
const after = (text: string) => [before[0]!, pinnedBlock(text), ...before.slice(1).map((m) => ({ ...m, index: m.index + 1, id: m.id }))];

/** One block over the two first turns, summarised without the path. */
function compaction(shift: number): CompactionView {
  const block = { index: 0, firstMessage: 1 + shift, lastMessage: 2 + shift, tokens: 100, status: 'done' as const, streamedTokens: 0 };
  return {
    id: 'c1',
    background: false,
    focus: null,
    state: 'ready',
    blocks: [{ ...block, summary: 'Wrapped the socket in a retry loop; maxRetries stays 5.', error: null, stats: null }],
    headTokens: 100,
    totals: null,
    checks: null,
    verdict: null,
    note: null,
  };
}

describe('loss report: a fact kept by a pin is not dropped', () => {
  for (const [name, report] of [
    ['fidelity', fidelityLoss],
    ['identifiers (fallback)', identifierLoss],
  ] as const) {
    it(`${name}: the pinned fact leaves the dropped list and the headline counts one fewer`, () => {
      const r0 = report(before, compaction(0));
      const fact = r0.dropped.find((f) => f.key === 'fetchWithRetry');
      assert.ok(fact, `dropped before the pin: ${r0.dropped.map((f) => f.key).join(', ')}`);
      const r1 = report(after(fact.key), compaction(1));
      assert.deepEqual(
        r1.dropped.map((f) => f.key),
        r0.dropped.filter((f) => f !== fact).map((f) => f.key),
        'kept by the pin',
      );
      assert.equal(droppedCount(r1), droppedCount(r0) - 1);
      assert.equal(r1.total, r0.total, 'the pinned block is not itself a source of facts');
      assert.notEqual(lossHeadline(r1), lossHeadline(r0));
    });

    it(`${name}: "Keep this" pins the fact's text: every fact it states is kept, the others stay dropped`, () => {
      const r0 = report(before, compaction(0));
      const fact = r0.dropped.find((f) => f.key === 'src/server/retry.ts')!;
      const r1 = report(after(fact.text), compaction(1));
      const stated = r0.dropped.filter((f) => fact.text.includes(f.key));
      assert.ok(stated.length >= 1);
      assert.deepEqual(
        r1.dropped.map((f) => f.key),
        r0.dropped.filter((f) => !stated.includes(f)).map((f) => f.key),
      );
      assert.equal(droppedCount(r1), droppedCount(r0) - stated.length);
    });
  }
});

describe('host: pinning a dropped fact updates the loss report it came from', () => {
  let ctl: SessionController | undefined;
  afterEach(async () => {
    await ctl?.dispose();
    ctl = undefined;
  });

  it('the side bar headline and the review editor drop the fact, before Adopt and after it', async () => {
    const clock = fixedClock();
    const ids = counterIds();
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids, clock }, '/s/pins.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 6; i++) {
      await store.append({ role: 'user', content: `question ${i}: look at src/app/module${i}.ts ${'lorem ipsum '.repeat(60)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
    }
    const posted: HostToWebview[] = [];
    const compactor = new FakeModel();
    const settings = { ...defaultSettings(), judge: { enabled: false, threshold: 7 }, blockTokens: 256 };
    const c = new SessionController({
      store,
      ledger: new TokenLedger(new CharEstimateCounter()),
      env: { settings, contextWindow: 32_768, agent: new FakeModel(), compactor, compactorLimiter: unlimited, judge: compactor },
      ...controllerDefaults(store, { id: 'pins', title: 'Pins' }),
      clock,
      ids,
      post: (m) => posted.push(m),
    });
    ctl = c;
    const panel = () => {
      const last = posted.filter((m) => m.type === 'snapshot' || m.type === 'compaction').pop()!;
      return last.type === 'snapshot' ? last.snapshot.compaction : last.type === 'compaction' ? last.compaction : null;
    };
    const review = () => {
      const b = new ReviewBridge();
      b.fromSnapshot(c.snapshot());
      return b.current!.loss!;
    };

    await c.handle({ type: 'send', text: '/compact' });
    const ready = panel()!;
    assert.equal(ready.state, 'ready');
    const fact = ready.loss!.first.find((f) => f.kind === 'path')!;
    assert.ok(fact, `a path is dropped: ${ready.loss!.headline}`);
    const n = ready.loss!.dropped;
    assert.equal(droppedCount(review()), n, 'the editor and the side bar agree before the pin');

    await c.handle({ type: 'pin', text: fact.text, kind: 'constraint', messageId: fact.messageId });
    assert.equal(c.snapshot().pins.length, 1);
    const pinned = panel()!;
    assert.equal(pinned.loss!.dropped, n - 1, `the headline counts one fewer: ${pinned.loss!.headline}`);
    assert.ok(!pinned.loss!.first.some((f) => f.key === fact.key), 'the fact left the side bar list');
    const r = review();
    assert.equal(droppedCount(r), n - 1);
    assert.ok(!r.dropped.some((f) => f.key === fact.key), 'the fact left the review editor list');

    await c.handle({ type: 'compaction-adopt', compactionId: ready.id });
    const adopted = panel()!;
    assert.equal(adopted.state, 'adopted');
    assert.equal(adopted.loss!.dropped, n - 1, 'the adopted compaction keeps the report as it was at Adopt');
  });
});
