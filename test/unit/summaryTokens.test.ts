/**
 * A block's summary size as the side bar's chips and tooltip and the review editor all state it: the worker's own
 * count when the text is the worker's, an estimate said to be one otherwise.
 */
import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { countMessageWith, type TokenCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { SessionController } from '../../src/host/sessionController';
import { summaryTokens, type BlockView, type HostToWebview } from '../../src/protocol/messages';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

const stats = { inputTokens: 4000, outputTokens: 310, summaryTokens: null, cachedTokens: null, ms: 900 };
const b = (patch: Partial<BlockView>): Pick<BlockView, 'status' | 'summary' | 'stats' | 'editedTokens'> => ({
  status: 'queued',
  summary: null,
  stats: null,
  ...patch,
});

describe("a block's summary tokens", () => {
  it("the worker's count for its own text; ≈ chars/4, marked as an estimate, for a text the user wrote", () => {
    assert.deepEqual(summaryTokens(b({ status: 'done', summary: 'x'.repeat(2000), stats })), { n: 310, estimate: false });
    // An edited block keeps the worker's stats, which no longer describe the text.
    assert.deepEqual(summaryTokens(b({ status: 'edited', summary: 'x'.repeat(41), stats })), { n: 11, estimate: true });
    // A reasoning model's worker decoded its thinking too: the summary's own count is what it holds.
    const thought = { ...stats, outputTokens: 1200, summaryTokens: 310 };
    assert.deepEqual(summaryTokens(b({ status: 'done', summary: 'x'.repeat(2000), stats: thought })), { n: 310, estimate: false });
    // Any text without the worker's count for it is estimated too.
    assert.deepEqual(summaryTokens(b({ status: 'failed', summary: 'x'.repeat(8) })), { n: 2, estimate: true });
  });

  // The second UI review: a regenerating block's chip went from "765→55" to "765→≈44", and the gauges dipped with it.
  it("a block being regenerated keeps the count of the text it still shows: the worker's, or the host's for an edit", () => {
    for (const status of ['queued', 'streaming'] as const) {
      assert.deepEqual(summaryTokens(b({ status, summary: 'x'.repeat(2000), stats })), { n: 310, estimate: false }, status);
      assert.deepEqual(summaryTokens(b({ status, summary: 'x'.repeat(41), stats, editedTokens: 12 })), { n: 12, estimate: false }, status);
    }
  });

  it("the host's count for an edited text it counted; the estimate only where it did not", () => {
    assert.deepEqual(summaryTokens(b({ status: 'edited', summary: 'x'.repeat(41), stats, editedTokens: 235 })), {
      n: 235,
      estimate: false,
    });
    // A count of the text it replaced says nothing of a block the worker then wrote again (and failed).
    assert.deepEqual(summaryTokens(b({ status: 'failed', summary: 'x'.repeat(8), editedTokens: 235 })), { n: 2, estimate: true });
  });

  it('none while a block has no text', () => {
    assert.equal(summaryTokens(b({ status: 'streaming' })), null);
    assert.equal(summaryTokens(b({ status: 'queued' })), null);
  });
});

describe('host: a block the user edits', () => {
  let ctl: SessionController | undefined;
  afterEach(async () => {
    await ctl?.dispose();
    ctl = undefined;
  });

  it("is counted with the session's token counter, calibrated like the other counts, not chars/4", async () => {
    // One token a word: far from chars/4 on this text, as a real tokenizer can be.
    const words: TokenCounter = {
      countText: (t) => t.split(/\s+/).filter(Boolean).length,
      countMessage(m) {
        return countMessageWith(this, m);
      },
    };
    const ledger = new TokenLedger(words);
    ledger.calibration.load({ factor: 1.25, samples: 10 });
    const clock = fixedClock();
    const ids = counterIds();
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids, clock }, '/s/edit.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 6; i++) {
      await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(200)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(200)}` });
    }
    const posted: HostToWebview[] = [];
    const compactor = new FakeModel();
    const settings = { ...defaultSettings(), judge: { enabled: false, threshold: 7 }, blockTokens: 256 };
    const c = new SessionController({
      store,
      ledger,
      env: { settings, contextWindow: 32_768, agent: new FakeModel(), compactor, compactorLimiter: unlimited, judge: compactor },
      ...controllerDefaults(store, { id: 'edit', title: 'Edit' }),
      clock,
      ids,
      post: (m) => posted.push(m),
    });
    ctl = c;
    await c.handle({ type: 'send', text: '/compact' });
    const ready = c.snapshot().compaction!;
    assert.equal(ready.state, 'ready');

    const text = 'DECISIONS:\n- keep the users table; migrations on users are additive only (no DROP TABLE users)';
    await c.handle({ type: 'block-edit', compactionId: ready.id, block: 0, text });
    const delta = posted.filter((m): m is Extract<HostToWebview, { type: 'block' }> => m.type === 'block').pop()!;
    const counted = ledger.calibrated(words.countText(text));
    assert.notEqual(counted, Math.ceil(text.length / 4), 'the test tells the count from the guess');
    assert.deepEqual([delta.block.status, delta.block.editedTokens], ['edited', counted]);
    assert.deepEqual(summaryTokens(delta.block), { n: counted, estimate: false });
    assert.deepEqual(summaryTokens(c.snapshot().compaction!.blocks[0]!), { n: counted, estimate: false }, 'a snapshot says the same');
  });
});
