import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction, predictWritten } from '../../src/core/compaction/plan';
import { buildWorkerPrompt, instructionInput } from '../../src/core/compaction/workerPrompt';
import { targetBlockPrompt } from '../../src/core/compaction/prompts';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { MemoCounter } from '../../src/core/tokens/memoCounter';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();

/** A session whose tool outputs are long enough (300 lines) for pre-trim's salience pass to run on them. */
async function snapshot(turns = 16) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
    const args = `{"path":"src/mod${t}.ts"}`;
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: args } }],
    });
    const lines = Array.from({ length: 300 }, (_, i) =>
      i === 150 ? `TypeError: parseHeader${t} is not a function` : `line ${i} of mod${t}`,
    );
    await store.append({ role: 'tool', tool_call_id: `c${t}`, content: lines.join('\n') });
    await store.append({ role: 'assistant', content: `Patched parseHeader${t} in src/mod${t}.ts.` });
  }
  return snapshotSession(store, new TokenLedger(counter), { strategy: 'token-fraction' }, [], {
    contextWindow: 200_000,
    replyReserve: 4096,
  });
}

const settings = {
  ...DEFAULT_COMPACTION_SETTINGS,
  contextWindow: 200_000,
  profile: UNIT_PROFILE,
  mode: 'parallel',
  layout: 'target-block',
} as const;

describe('target-block worker prompts: client work per compaction', () => {
  it("counts the head's texts a bounded number of times per compaction, however many workers, and the estimate holds", async () => {
    const snap = await snapshot();
    const headChars = snap.context.reduce((n, m) => n + (m.content ?? '').length, 0);
    for (const blockTokens of [1024, 2048, 4096]) {
      const plan = planCompaction(snap, { ...settings, blockTokens });
      assert.equal(plan.settings.layout, 'target-block');
      let chars = 0;
      const counted = new Set<string>();
      const count = (m: ChatMessage) => {
        chars += (m.content ?? '').length;
        counted.add(m.content ?? '');
        return counter.countMessage(m);
      };
      const prompts = plan.blocks.map((b) => buildWorkerPrompt(plan, b, undefined, count));
      const instructionChars = prompts.reduce((n, p) => n + p.request.messages[0]!.content!.length, 0) + prompts.length * 2500;
      // A message pre-trim left alone has the session's count (in the editor, counted on a worker thread): only what
      // pre-trim rewrote is counted, at most twice (as context, once per plan, and inside its own block).
      for (const m of snap.context)
        if (m.role !== 'tool' && (m.content ?? '').length > 20) assert.ok(!counted.has(m.content!), `counted again: ${m.content}`);
      assert.ok(
        chars <= headChars + instructionChars,
        `${plan.blocks.length} blocks counted ${chars} characters for a ${headChars}-character session`,
      );
      for (const [k, p] of prompts.entries()) {
        assert.ok(p.request.messages[1]!.content!.includes(p.targetText), `block ${k}'s prompt carries its transcript`);
        // The estimate, built from per-message counts, against counting the whole request as sent: it may err
        // high (context framing is reckoned generously) but not low, where a prompt could overflow the window.
        const whole = p.request.messages.reduce((n, m) => n + counter.countMessage(m), 0);
        const ok = p.promptTokens >= 0.99 * whole && p.promptTokens <= 1.2 * whole;
        assert.ok(ok, `block ${k}: estimate ${p.promptTokens}, whole ${whole}`);
      }
    }
  });

  it('planning a snapshot again (as predictWritten does after the run) reuses its head model: no second salience scan', async () => {
    const snap = await snapshot();
    const s = { ...settings, blockTokens: 2048 };
    const a = planCompaction(snap, s);
    const b = planCompaction(snap, s);
    // The partition is cached inside the head model: the same array means the same model.
    assert.equal(b.blocks, a.blocks);
    assert.equal(typeof predictWritten(a, a.workers.targets), 'number');
    // A different snapshot gets its own model.
    const other = planCompaction(await snapshot(), s);
    assert.notEqual(other.blocks, a.blocks);
    assert.deepEqual(other.blocks, a.blocks);
  });

  it("counts one instruction per plan shape, not one per block, and the instruction's count is the tokenizer's", async () => {
    const bpe = await loadTiktokenCounter();
    const snap = await snapshot();
    const plan = planCompaction(snap, { ...settings, blockTokens: 1024 });
    assert.ok(plan.blocks.length >= 8, `${plan.blocks.length} blocks`);
    const memo = new MemoCounter(bpe);
    const tokenized: string[] = [];
    const count = (m: ChatMessage) => memo.countMessage(m);
    const inner = memo as unknown as { inner: { countText(t: string): number } };
    const real = inner.inner;
    inner.inner = { countText: (t) => (tokenized.push(t), real.countText(t)) };
    const prompts = plan.blocks.map((b) => buildWorkerPrompt(plan, b, 'keep the parser errors', count));
    for (const [k, b] of plan.blocks.entries()) {
      // What the instruction costs as sent, digits and all, by the tokenizer itself.
      const sent = targetBlockPrompt('', '', instructionInput(plan, b, 'keep the parser errors'));
      assert.equal(
        prompts[k]!.instructionTokens,
        sent.reduce((n, m) => n + bpe.countMessage(m), 0),
        `block ${k}`,
      );
    }
    // Every block's instruction names its number, size and target; their shapes differ only in how many digits those
    // have ("part 3 of 13" and "part 12 of 13") and in the last block's closing sections.
    const instructions = tokenized.filter((t) => t.includes('Summarise only the text inside'));
    assert.ok(instructions.length <= 4, `${instructions.length} instructions tokenized for ${plan.blocks.length} blocks`);
  });
});
