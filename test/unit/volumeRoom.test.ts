import assert from 'node:assert/strict';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { planWork } from '../../src/core/perf/planner';
import type { BlockShape, HeadModel, PlannerInput } from '../../src/core/perf/planner';
import { H100_7B, UNIT_PROFILE } from '../../src/core/perf/profile';
import type { ToolSpec } from '../../src/core/ports';
import { MIN_BLOCK_TARGET, splitVolume, summaryRoom, summaryVolume } from '../../src/core/perf/volume';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** A head of `headTokens` in messages of `msg` tokens, cut into blocks of whole messages nearest B. */
function head(headTokens: number, msg: number, tail: number): HeadModel {
  return {
    headTokens,
    frameTokens: 1500,
    tailTokens: tail,
    targetContextTokens: 512,
    instructionTokens: { 'cache-aligned': 300, 'target-block': 300 },
    blocks(B: number): BlockShape[] {
      if (B >= headTokens) return [{ tokens: headTokens, transcriptTokens: Math.round(headTokens * 0.9) }];
      const per = Math.max(msg, Math.round(B / msg) * msg);
      const out: BlockShape[] = [];
      for (let left = headTokens; left > 0; left -= per) {
        const t = Math.min(per, left);
        out.push({ tokens: t, transcriptTokens: Math.round(t * 0.9) });
      }
      return out;
    },
  };
}

describe('summary volume when the kept tail already passes lo', () => {
  // Two 8K turns kept on a 32K window: 16,000 tokens against lo = 13,107.
  const room = summaryRoom({ lo: 0.4, window: 32_768, keptTokens: 16_000 });

  it('asks the head for the concise compression, not 64 tokens in all', () => {
    assert.ok(room < 0, `fixture: the room is negative (${room})`);
    for (const verbosity of ['concise', 'detailed', 'very detailed'] as const)
      assert.equal(summaryVolume({ headTokens: 9000, verbosity, room }), 9000 / 24, verbosity);
    // A tail of 20,000 (the preserve-user-messages strategy) and a 60,000-token head: the floor grows with the head.
    const tight = summaryRoom({ lo: 0.4, window: 32_768, keptTokens: 20_000 });
    assert.equal(summaryVolume({ headTokens: 60_000, verbosity: 'detailed', room: tight }), 2500);
  });

  it('still lands at lo while the room holds more than that, and shrinks without a jump as the tail grows', () => {
    assert.equal(summaryVolume({ headTokens: 9000, verbosity: 'detailed', room: 500 }), 500);
    assert.equal(summaryVolume({ headTokens: 9000, verbosity: 'detailed', room: 2000 }), 750);
    let before = 750;
    for (let r = 2000; r >= -5000; r -= 7) {
      const v = summaryVolume({ headTokens: 9000, verbosity: 'detailed', room: r });
      assert.ok(v <= before && before - v <= 7, `room ${r}: ${v} after ${before}`);
      assert.ok(v >= 375, `room ${r}: ${v}`);
      before = v;
    }
  });

  it('gives the planner one total, which every option asks for: the sequential call no longer wins by writing least', () => {
    const total = summaryVolume({ headTokens: 9000, verbosity: 'detailed', room });
    const input = { head: head(9000, 600, 16_000), summaryTokens: total, window: 32_768, cache: 'warm', replicas: 1, maxConcurrency: 64 };
    const r = planWork({ ...input, profile: H100_7B } as PlannerInput);
    const options = [r.choice.chosen, ...r.choice.alternatives];
    assert.ok(
      options.some((o) => o.blocks === 5),
      'fixture: a five-block option is compared',
    );
    for (const o of options) assert.equal(o.summaryTokens, total, o.label);
    assert.equal(sum(r.work.targets), total);
  });

  it('through the real plan: a session whose last turns pass lo is asked the concise volume, shared out exactly', async () => {
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 6; t++) {
      await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
      for (let k = 0; k < 7; k++) {
        const id = `c${t}_${k}`;
        const call = { id, type: 'function' as const, function: { name: 'read_file', arguments: `{"path":"src/mod${t}_${k}.ts"}` } };
        await store.append({ role: 'assistant', content: null, tool_calls: [call] });
        await store.append({ role: 'tool', tool_call_id: id, content: `// src/mod${t}_${k}.ts\n${'const x = 1;\n'.repeat(320)}` });
      }
      await store.append({ role: 'assistant', content: `Patched src/mod${t}.ts.` });
    }
    const tools: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const snap = snapshotSession(store, new TokenLedger(new CharEstimateCounter()), { strategy: 'recent-turns' }, tools, {
      contextWindow: 32_768,
      replyReserve: 4096,
    });
    const plan = planCompaction(snap, { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 32_768, profile: UNIT_PROFILE });
    const kept = sum(snap.tokens) - plan.headTokens;
    assert.ok(kept > 0.4 * 32_768, `fixture: the kept part (${kept}) passes lo`);
    assert.equal(plan.summaryTokens, Math.round(plan.headTokens / 24));
    assert.equal(sum(plan.workers.targets), plan.summaryTokens);
  });
});

describe('the volume split keeps the total when a block is held at the minimum', () => {
  it('a small last block gets the minimum and the others give it up, so the parts add up', () => {
    const parts = splitVolume(400, [4000, 4000, 500]);
    assert.deepEqual(parts, [168, 168, MIN_BLOCK_TARGET]);
    assert.equal(sum(parts), 400);
    assert.equal(sum(splitVolume(375, [1800, 1800, 1800, 1800, 1800])), 375);
  });

  it('every option of a head whose last block is small asks for the same total', () => {
    const total = 700;
    const r = planWork({
      head: head(8600, 2000, 0),
      summaryTokens: total,
      profile: UNIT_PROFILE,
      window: 100_000,
      cache: 'cold',
      replicas: 1,
      maxConcurrency: 64,
    });
    const options = [r.choice.chosen, ...r.choice.alternatives];
    assert.ok(
      options.some((o) => o.blocks === 5),
      'fixture: 4 blocks of 2,000 and one of 600',
    );
    for (const o of options) assert.equal(o.summaryTokens, total, o.label);
  });

  it('when the floors pass the total, they still win', () => {
    assert.deepEqual(splitVolume(100, [2000, 2000]), [MIN_BLOCK_TARGET, MIN_BLOCK_TARGET]);
  });
});
