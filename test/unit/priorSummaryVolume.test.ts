import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import { planWork, predictWithOutputs } from '../../src/core/perf/planner';
import type { HeadModel, PlannerInput } from '../../src/core/perf/planner';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { MIN_BLOCK_TARGET, maxTokensFor, priorSummaryFloor, splitVolume, volumeWithPriors } from '../../src/core/perf/volume';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited } from '../../src/core/ports';
import type { ToolSpec } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('the summary volume of an earlier summary folded in again', () => {
  it('reserves at least half of the earlier summary, then splits the rest over the raw blocks in proportion', () => {
    // Without the floor the 1,400-token summary got 1000 × 1400 / 6400 = 218 tokens, compressed a second time.
    assert.deepEqual(splitVolume(1000, [1400, 3000, 2000]), [219, 469, 312]);
    const parts = splitVolume(1000, [1400, 3000, 2000], [1400, 0, 0]);
    assert.deepEqual(parts, [700, 180, 120]);
    assert.equal(sum(parts), 1000, 'the total is kept when it can hold the floor');
    assert.equal(parts[1]! / parts[2]!, 3000 / 2000, 'the raw blocks share the rest in proportion to their size');
  });

  it("asks an earlier summary for its floor, never more than it holds; the rest is the new conversation's", () => {
    assert.deepEqual(splitVolume(600, [40, 3000], [40, 0]), [40, 560], 'a summary under the sections minimum is kept whole');
    assert.deepEqual(splitVolume(600, [100, 3000], [100, 0]), [64, 536]);
    // A volume above the floor (set by hand, --volume): the floor is the summary's, the rest the new work's.
    assert.deepEqual(splitVolume(5000, [1000, 5000], [1000, 0]), [500, 4500]);
    // A total that counts the floor apart, as summaryVolume's does: the new conversation gets its own volume.
    const total = volumeWithPriors(9_713, [713], 24, 0);
    assert.equal(total, priorSummaryFloor(713) + Math.round(9_000 / 24));
    assert.deepEqual(splitVolume(total, [713, 4500, 4500], [713, 0, 0]), [357, 188, 187]);
    assert.equal(priorSummaryFloor(713), 357);
    assert.equal(priorSummaryFloor(0), 0);
  });

  it('when the total cannot hold the floor, the floor wins and each raw block still gets the minimum', () => {
    // The README's example session compacted twice: a 1,445-token summary and a 715-token message, 180 tokens in all.
    const parts = splitVolume(180, [1445, 715], [1445, 0]);
    assert.deepEqual(parts, [723, MIN_BLOCK_TARGET]);
    assert.ok(sum(parts) > 180 && sum(parts) < 1445 + 715, 'the total grows, and the summary still shrinks the head');
    // The sequential call's one block holds the summary among the rest: asked what the two blocks are in all.
    assert.deepEqual(splitVolume(180, [2160], [1445]), [723 + MIN_BLOCK_TARGET]);
  });

  it('leaves a head without earlier summaries as before', () => {
    assert.deepEqual(splitVolume(1000, [3000, 1000, 2000], [0, 0, 0]), splitVolume(1000, [3000, 1000, 2000]));
  });
});

/** A planner head: an earlier summary of `prior` tokens (message 1), then raw messages of 1,000 tokens. */
function headWithSummary(prior: number, rawMessages: number): HeadModel {
  const indices = Array.from({ length: rawMessages }, (_, k) => k + 2);
  const headTokens = prior + 1000 * rawMessages;
  const partition = (B: number) => {
    if (B >= headTokens) return [{ index: 0, messageIndices: [1, ...indices], tokens: headTokens }];
    const per = Math.max(1, Math.round(B / 1000));
    const blocks = [{ index: 0, messageIndices: [1], tokens: prior, isPriorSummary: true }];
    for (let k = 0; k < indices.length; k += per) {
      const own = indices.slice(k, k + per);
      blocks.push({ index: blocks.length, messageIndices: own, tokens: 1000 * own.length, isPriorSummary: false });
    }
    return blocks;
  };
  return {
    headTokens,
    frameTokens: 100,
    tailTokens: 0,
    targetContextTokens: 0,
    instructionTokens: { 'cache-aligned': 40, 'target-block': 40 },
    blocks: (B) => partition(B).map((b) => ({ tokens: b.tokens, transcriptTokens: b.tokens })),
    partition,
  };
}

describe('the planner with an earlier summary in the head', () => {
  const input: PlannerInput = {
    head: headWithSummary(800, 8),
    summaryTokens: 700,
    profile: UNIT_PROFILE,
    window: 100_000,
    cache: 'cold',
    replicas: 1,
    maxConcurrency: 64,
    blockSizes: [2048, 4096],
  };

  it('gives every plan the floor, and predicts each with the targets its workers get', () => {
    const r = planWork(input);
    for (const o of [r.choice.chosen, ...r.choice.alternatives]) {
      const forced = planWork({
        ...input,
        forced: { mode: o.mode, layout: o.layout, blockTokens: o.blockTokens, concurrency: o.concurrency },
      });
      const { targets, order } = forced.work;
      if (o.mode === 'parallel') assert.deepEqual(targets.slice(0, 1), [400], `${o.label}: the earlier summary's block`);
      else assert.deepEqual(targets, [700], 'sequential: one worker, the floor and the rest, the same total');
      assert.equal(forced.work.option.summaryTokens, 700, `${o.label}: the total fits the floor`);
      assert.equal(sum(targets), 700);
      assert.deepEqual(forced.work.maxTokens, targets.map(maxTokensFor));
      assert.equal(predictWithOutputs(input, forced.work.option, order, targets), forced.work.option.predictedMs, o.label);
    }
  });
});

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const ids = counterIds();
const deps = (model: FakeModel): CompactionDeps => ({ model, limiter: unlimited, count, clock: fixedClock(), ids });
const settings = (over: Partial<CompactionSettings> = {}): CompactionSettings => ({
  ...DEFAULT_COMPACTION_SETTINGS,
  contextWindow: 200_000,
  profile: UNIT_PROFILE,
  ...over,
});

const RULE = 'IMPORTANT standing rule from the user: never edit vendor/ and always answer in French.';
/** A first summary of about 700 tokens whose CONSTRAINTS hold the user's standing rule. */
const FIRST_SUMMARY = [
  'DECISIONS:',
  ...Array.from({ length: 20 }, (_, k) => `- patched parseHeader in src/mod${k}.ts to reject a missing colon (case ${k})`),
  'FACTS:',
  ...Array.from({ length: 20 }, (_, k) => `- src/mod${k}.ts exports parseHeader and parseBody; tests in test/mod${k}.test.ts`),
  'CONSTRAINTS:',
  `- ${RULE}`,
].join('\n');

async function appendTurns(store: SessionStore, from: number, turns: number): Promise<void> {
  for (let t = from; t < from + turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/mod${t}.ts"}` } }],
    });
    await store.append({ role: 'tool', tool_call_id: `c${t}`, content: `// src/mod${t}.ts\n` + 'x'.repeat(6000) });
    await store.append({ role: 'assistant', content: `Patched parseHeader in src/mod${t}.ts.` });
  }
}

/** A session compacted once (one worker, so the summary is FIRST_SUMMARY), then `more` turns of new work. */
async function recompactable(more: number) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  await appendTurns(store, 0, 8);
  const ledger = new TokenLedger(counter);
  const snap = () => snapshotSession(store, ledger, { strategy: 'recent-turns' }, TOOLS, { contextWindow: 200_000, replyReserve: 4096 });
  const first = createCompaction(snap(), settings({ mode: 'sequential' }), deps(new FakeModel(() => FIRST_SUMMARY)));
  await first.start();
  await first.adopt(store);
  await appendTurns(store, 8, more);
  return snap();
}

describe('re-compaction asks the earlier summary for at least half of itself', () => {
  it('through the real plan: the worker for the earlier summary is sent that target and its max_tokens', async () => {
    const snap = await recompactable(8);
    const model = new FakeModel();
    const pc = createCompaction(snap, settings({ mode: 'parallel', blockTokens: 4096 }), deps(model));
    const k = pc.plan.blocks.findIndex((b) => b.isPriorSummary);
    assert.equal(k, 0, 'the earlier summary is the oldest block');
    const priorTokens = pc.plan.blocks[0]!.tokens;
    assert.ok(priorTokens > 500, `fixture: a long first summary (${priorTokens} tokens)`);
    const target = pc.plan.workers.targets[0]!;
    assert.equal(target, Math.ceil(priorTokens / 2), `the earlier summary's target against ${priorTokens} tokens`);
    assert.ok(target <= priorTokens);
    // The rest of the volume goes to the new conversation, and the planner's option counts what the workers are asked.
    assert.equal(sum(pc.plan.workers.targets), pc.plan.choice!.chosen.summaryTokens);
    assert.ok(pc.plan.workers.targets.slice(1).every((t) => t >= MIN_BLOCK_TARGET));
    await pc.start();
    const sent = model.requests.filter((r) => (r.messages.at(-1)?.content ?? '').includes(`TARGET_TOKENS: ${target}\n`));
    assert.equal(sent.length, 1, "one worker is asked for the earlier summary's target");
    assert.equal(sent[0]!.maxTokens, maxTokensFor(target));
    assert.ok(
      sent[0]!.messages.some((m) => (m.content ?? '').includes(RULE)),
      'and it is the worker that holds the rule',
    );
  });

  it('the new conversation keeps its own volume beside the floor, even with no room left at lo', async () => {
    const snap = await recompactable(8);
    // A lo the kept tail alone passes: the volume is at its floor, head ÷ 24.
    const pc = createCompaction(snap, settings({ mode: 'parallel', blockTokens: 4096, targetFraction: 0.01 }), deps(new FakeModel()));
    const prior = pc.plan.blocks[0]!;
    assert.ok(prior.isPriorSummary);
    const raw = sum(pc.plan.blocks.slice(1).map((b) => b.tokens));
    const rawTargets = sum(pc.plan.workers.targets.slice(1));
    // Out of one total the floor left the new work 128 tokens for 9,000 (70×) in a review's run.
    assert.ok(rawTargets >= Math.round(raw / 24) - 1, `new conversation: ${rawTargets} summary tokens for ${raw}`);
    assert.equal(pc.plan.workers.targets[0], priorSummaryFloor(prior.tokens));
  });

  it('the one sequential worker is asked for the floor and at least the minimum for the new conversation', async () => {
    const snap = await recompactable(2);
    const pc = createCompaction(snap, settings({ mode: 'sequential' }), deps(new FakeModel()));
    const head = pc.plan.blocks[0]!;
    const prior = head.messageIndices.find((i) => snap.context[i]!.kind === 'summary');
    assert.notEqual(prior, undefined, 'fixture: the earlier summary is in the head');
    const floor = Math.ceil(snap.tokens[prior!]! / 2);
    assert.ok(pc.plan.workers.targets[0]! >= floor + MIN_BLOCK_TARGET, `${pc.plan.workers.targets[0]} against floor ${floor}`);
  });
});
