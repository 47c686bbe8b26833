import { strict as assert } from 'node:assert';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import type { PerfProfile } from '../../src/core/perf/profile';
import { simulateSteps } from '../../src/core/perf/stepSim';
import type { SimRequest } from '../../src/core/perf/stepSim';
import { planWork } from '../../src/core/perf/planner';
import { describeLoads } from '../../src/core/perf/serverLoad';
import type { HeadModel, PlannerInput } from '../../src/core/perf/planner';
import type { PlanOption } from '../../src/core/compaction/events';
import { MIN_BLOCK_TARGET, maxTokensFor, splitVolume, summaryRoom, summaryVolume } from '../../src/core/perf/volume';

// The unit profile: a step costs max(10, 0.01 × prefill tokens) ms + 1 ms per 1,000 KV tokens
// read by decoding sequences; 4 seats; 1,000 tokens per step.
const run = (reqs: SimRequest[], extra: Partial<Parameters<typeof simulateSteps>[1]> = {}) =>
  simulateSteps(reqs, { profile: UNIT_PROFILE, order: reqs.map((_, i) => i), concurrency: 99, replicas: 1, warmSharedTokens: 0, ...extra });
const close = (got: number, want: number) => assert.ok(Math.abs(got - want) < 1e-6, `${got} vs ${want}`);
/** An option's predicted time; failing when it was never simulated. */
const ms = (o: PlanOption): number => o.predictedMs ?? assert.fail(`${o.label} has no prediction`);

describe('step model', () => {
  it('chunks a long prefill by the step budget, then decodes with the KV term', () => {
    // 2,500 prompt tokens: steps of 1000, 1000, 500 (10 ms each, the floor); first token at 30 ms.
    // Then 2 decode steps reading 2,501 and 2,502 KV tokens: 12.501 + 12.502.
    const r = run([{ promptTokens: 2500, sharedTokens: 0, outputTokens: 3 }]);
    close(r.firstTokenMs[0]!, 30);
    close(r.wallMs, 30 + 12.501 + 12.502);
    assert.equal(r.steps, 5);
  });

  it('decoding sequences share one step and each adds its KV', () => {
    // Both prefill in one 800-token step (10 ms), then one step for both: 10 + (401 + 401) / 1000.
    const r = run([
      { promptTokens: 400, sharedTokens: 0, outputTokens: 2 },
      { promptTokens: 400, sharedTokens: 0, outputTokens: 2 },
    ]);
    close(r.wallMs, 10 + 10.802);
  });

  it('admits no more than max-num-seqs at once', () => {
    const reqs = Array.from({ length: 5 }, () => ({ promptTokens: 100, sharedTokens: 0, outputTokens: 1 }));
    const r = run(reqs);
    assert.deepEqual(r.finishMs, [10, 10, 10, 10, 20]);
  });

  it('the client concurrency limit holds requests back until one ends', () => {
    const reqs = Array.from({ length: 3 }, () => ({ promptTokens: 100, sharedTokens: 0, outputTokens: 1 }));
    assert.deepEqual(run(reqs, { concurrency: 1 }).finishMs, [10, 20, 30]);
  });

  it('a warm shared prefix is served from the cache in whole 16-token blocks', () => {
    // 4,990 shared tokens cached → 4,976 (311 blocks) hit; 24 tokens prefilled in one 10 ms step.
    const r = run([{ promptTokens: 5000, sharedTokens: 4990, outputTokens: 1 }], { warmSharedTokens: 6000 });
    close(r.wallMs, 10);
  });

  it('cold, a request admitted later reuses the prefix an earlier one registered', () => {
    // A: 1,600 tokens, all new: 1000 + 600. B (shares 1,600 with A, 1,700 long) is admitted in
    // step 2 with 1,600 cached and prefills 100: step 2 has 700 prefill tokens (10 ms).
    const r = run([
      { promptTokens: 1600, sharedTokens: 1600, outputTokens: 1 },
      { promptTokens: 1700, sharedTokens: 1600, outputTokens: 1 },
    ]);
    assert.deepEqual(r.finishMs, [20, 20]);
  });

  it('measures the live agent: mean step time while the run lasts against alone', () => {
    // Agent holds 10,000 KV tokens: alone 10 + 10 = 20 ms per token. One request of 1,000
    // tokens: step 1 = agent decode (1 budget token) + 999 prefill → 10 + 10.000 = 20 ms;
    // step 2 = last prompt token + agent decode → 10 + 10.001 = 20.001 ms; first token ends it.
    const r = run([{ promptTokens: 1000, sharedTokens: 0, outputTokens: 1 }], { agentKvTokens: 10_000 });
    close(r.agentAloneTpotMs!, 20);
    close(r.wallMs, 20 + 20.001);
    close(r.agentTpotMs!, (20 + 20.001) / 2);
  });

  it("other clients' sequences take seats and add their KV to every step", () => {
    // Three others holding 1,000 KV tokens each. Step 1: their 3 decode tokens and the request's 100-token prefill:
    // 10 + 3,000 / 1,000 = 13 ms. Step 2: four decoders, 3 × 1,000 (theirs held steady) + 101 KV: 13.101 ms.
    const one = [{ promptTokens: 100, sharedTokens: 0, outputTokens: 2 }];
    close(run(one, { load: [{ sequences: 3, kvTokens: 3000 }] }).wallMs, 13 + 13.101);
    // Three of the four seats taken: a second request waits until the first ends (at 20.104 ms), where without
    // them both run at once.
    const two = [...one, ...one];
    const [a, b] = run(two, { load: [{ sequences: 3, kvTokens: 0 }] }).finishMs;
    assert.ok(a! < 21 && b! > 40, `${a} ${b}`);
    assert.ok(run(two).finishMs[1]! < 21);
    // A replica with other clients' sequences and none of ours is not stepped: the run takes the steps it takes
    // without them, and ends when it does.
    const loaded = run(one, { replicas: 2, load: [undefined, { sequences: 2, kvTokens: 0 }] });
    const idle = run(one, { replicas: 2 });
    assert.deepEqual([loaded.steps, loaded.wallMs], [idle.steps, idle.wallMs]);
    // More others than seats: one is kept free, so the run ends (the others would have ended on the server).
    assert.ok(Number.isFinite(run(one, { load: [{ sequences: 50, kvTokens: 0 }] }).wallMs));
    // The live agent's time alone counts the others too: 4 decoders over 10,000 + 3,000 KV tokens.
    close(run(one, { agentKvTokens: 10_000, load: [{ sequences: 2, kvTokens: 3000 }] }).agentAloneTpotMs!, 10 + 13);
  });

  it("requests queued on the server run before the workers: counted as running, with the running ones' mean KV", () => {
    const one = [{ promptTokens: 100, sharedTokens: 0, outputTokens: 2 }];
    // Two running with 1,000 KV tokens each and one waiting: the same steps as three running with 3,000.
    close(run(one, { load: [{ sequences: 2, kvTokens: 2000, waiting: 1 }] }).wallMs, 13 + 13.101);
    // A queue alone takes seats and holds no KV yet: three of the four seats, so a second request waits.
    const [a, b] = run([...one, ...one], { load: [{ sequences: 0, kvTokens: 0, waiting: 3 }] }).finishMs;
    assert.ok(a! < 21 && b! > 40, `${a} ${b}`);
    // A server queues when its cache is full: the queued ones' KV is counted only up to the cache (1M tokens here).
    // One running with 900K and three waiting are three others holding 1M, not 2.7M: 1,010 ms a step, not 2,710.
    close(run(one, { load: [{ sequences: 1, kvTokens: 900_000, waiting: 3 }] }).wallMs, 1010 + 1010.101);
  });

  it('spreads requests over replicas by load', () => {
    const reqs = Array.from({ length: 2 }, () => ({ promptTokens: 1000, sharedTokens: 0, outputTokens: 1 }));
    // One replica: 2 steps of 1,000 tokens; two: each in its own first step.
    assert.deepEqual(run(reqs).finishMs, [10, 20]);
    assert.deepEqual(run(reqs, { replicas: 2 }).finishMs, [10, 10]);
  });
});

describe('summary volume', () => {
  it('follows the verbosity, bounded by the room and by 40 % of the head', () => {
    assert.equal(summaryVolume({ headTokens: 120_000, verbosity: 'detailed', room: undefined }), 10_000);
    assert.equal(summaryVolume({ headTokens: 120_000, verbosity: 'concise', room: undefined }), 5_000);
    assert.equal(summaryVolume({ headTokens: 120_000, verbosity: 'detailed', room: 6_000 }), 6_000);
    // The room squeezes no further than the concise verbosity (120,000 / 24).
    assert.equal(summaryVolume({ headTokens: 120_000, verbosity: 'detailed', room: 4_000 }), 5_000);
    assert.equal(summaryVolume({ headTokens: 100, verbosity: 'very detailed', room: undefined }), MIN_BLOCK_TARGET);
    assert.equal(summaryRoom({ lo: 0.4, window: 100_000, keptTokens: 30_000, overheadTokens: 500 }), 9_500);
  });

  it('refuses a verbosity it does not know, with the ones it does (a NaN volume made the planner search without end)', () => {
    const bad = { headTokens: 1000, verbosity: 'normal' as unknown as 'detailed', room: undefined };
    assert.throws(() => summaryVolume(bad), /unknown verbosity "normal" \(concise, detailed, very detailed\)/);
  });

  it('splits the total in proportion to block size, adding up exactly', () => {
    const parts = splitVolume(1000, [3000, 1000, 2000]);
    assert.deepEqual(parts, [500, 167, 333]);
    assert.equal(
      parts.reduce((a, b) => a + b, 0),
      1000,
    );
    assert.equal(maxTokensFor(400), 532);
  });
});

/** A head of equal messages: B-token blocks, transcripts the same size as the blocks. */
function uniformHead(headTokens: number, frame = 100): HeadModel {
  return {
    headTokens,
    frameTokens: frame,
    tailTokens: 0,
    targetContextTokens: 0,
    instructionTokens: { 'cache-aligned': 40, 'target-block': 40 },
    blocks: (B) => {
      const n = Math.max(1, Math.ceil(headTokens / B));
      return Array.from({ length: n }, (_, k) => {
        const t = k < n - 1 ? Math.floor(headTokens / n) : headTokens - (n - 1) * Math.floor(headTokens / n);
        return { tokens: t, transcriptTokens: t };
      });
    },
  };
}

const input = (over: Partial<PlannerInput>): PlannerInput => ({
  head: uniformHead(3000),
  summaryTokens: 300,
  profile: UNIT_PROFILE,
  window: 100_000,
  cache: 'cold',
  replicas: 1,
  maxConcurrency: 64,
  ...over,
});

describe('planner', () => {
  it('predicts the sequential call by hand', () => {
    // Target-block sequential: 60 system + 3,000 + 40 = 3,100 prompt tokens: 4 prefill steps (40 ms).
    // 299 more tokens, each a step of 10 ms + KV/1000 with KV = 3,101 … 3,399: 2,990 + 971.75.
    const r = planWork(input({ forced: { mode: 'sequential', layout: 'target-block' } }));
    assert.equal(r.choice.chosen.label, 'sequential target-block');
    assert.equal(r.choice.chosen.predictedMs, Math.round(40 + 2990 + 971.75));
    assert.deepEqual(r.work.targets, [300]);
    assert.deepEqual(r.choice.forced, ['mode=sequential', 'layout=target-block']);
  });

  it('chooses the fastest option and lists the others slowest last, at the same volume', () => {
    const r = planWork(input({ blockSizes: [1024, 2048] }));
    const allowed = r.choice.alternatives.filter((a) => !a.excluded);
    assert.ok(allowed.length >= 4);
    for (const a of allowed) assert.ok(ms(r.choice.chosen) <= ms(a), `${a.label} ${a.predictedMs}`);
    for (let i = 1; i < allowed.length; i++) assert.ok(ms(allowed[i - 1]!) <= ms(allowed[i]!));
    // Many short decodes beat one long one here: the chosen plan is parallel.
    assert.equal(r.choice.chosen.mode, 'parallel');
    for (const a of [r.choice.chosen, ...allowed]) assert.equal(a.summaryTokens, 300);
    const seq = allowed.find((a) => a.mode === 'sequential')!;
    assert.ok(ms(seq) > 2 * ms(r.choice.chosen));
  });

  it('takes the sequential call when prefill is what costs and the prefix is cached', () => {
    // 1 ms per prefill token, no KV term: re-prefilling blocks costs seconds, the warm
    // sequential call prefills only its instruction.
    const slowPrefill: PerfProfile = {
      ...UNIT_PROFILE,
      maxNumSeqs: 64,
      step: { ...UNIT_PROFILE.step, prefillMsPerToken: 1, decodeKvMsPerKToken: 0 },
    };
    const r = planWork(input({ profile: slowPrefill, cache: 'warm', summaryTokens: 64, head: uniformHead(30_000) }));
    assert.equal(r.choice.chosen.mode, 'sequential');
    assert.equal(r.choice.chosen.layout, 'cache-aligned');
  });

  it('in the background, rules out plans that slow the agent past the limit', () => {
    const r = planWork(
      input({ head: { ...uniformHead(6000), tailTokens: 4000 }, background: { maxSlowdown: 1.2 }, blockSizes: [1024, 2048] }),
    );
    assert.ok(r.choice.background);
    assert.ok(r.choice.chosen.agentSlowdown! <= 1.2, String(r.choice.chosen.agentSlowdown));
    const excluded = r.choice.alternatives.filter((a) => a.excluded);
    assert.ok(excluded.length > 0);
    for (const a of excluded) assert.ok(a.agentSlowdown! > 1.2);
  });

  it("plans around other clients' work on the server: slower predictions, fewer seats, the load recorded", () => {
    const idle = planWork(input({ blockSizes: [1024] }));
    const busy = planWork(input({ blockSizes: [1024], serverLoad: [{ sequences: 2, kvTokens: 20_000 }] }));
    assert.deepEqual(busy.choice.serverLoad, [{ sequences: 2, kvTokens: 20_000 }]);
    assert.equal(idle.choice.serverLoad, undefined);
    const time = (r: typeof idle, f: (a: PlanOption) => boolean) =>
      Math.min(...[r.choice.chosen, ...r.choice.alternatives].filter(f).map((a) => a.predictedMs ?? Infinity));
    for (const [what, f] of [
      ['sequential', (a: PlanOption) => a.label === 'sequential target-block'],
      ['parallel', (a: PlanOption) => a.mode === 'parallel'],
    ] as const)
      assert.ok(time(busy, f) > time(idle, f) + 20, `${what}: ${time(busy, f)} vs ${time(idle, f)}`);
    // Four seats, two taken by others: no option sends more than two workers at once.
    for (const a of [busy.choice.chosen, ...busy.choice.alternatives]) assert.ok(a.concurrency <= 2, a.label);
    // Requests waiting for a seat take one too: one running and one waiting leave two.
    const queued = planWork(input({ blockSizes: [1024], serverLoad: [{ sequences: 1, kvTokens: 10_000, waiting: 1 }] }));
    for (const a of [queued.choice.chosen, ...queued.choice.alternatives]) assert.ok(a.concurrency <= 2, a.label);
    assert.ok(queued.choice.alternatives.some((a) => a.concurrency === 2) || queued.choice.chosen.concurrency === 2);
    // A reading of an idle server changes nothing.
    const none = planWork(input({ blockSizes: [1024], serverLoad: [{ sequences: 0, kvTokens: 0 }] }));
    assert.deepEqual(none.choice, idle.choice);
  });

  it("says what load it planned around, in the views' token format", () => {
    assert.equal(
      describeLoads([{ sequences: 12, kvTokens: 310_400, waiting: 3 }]),
      'the server: 12 other requests running, 310K KV tokens, 3 waiting',
    );
    assert.equal(
      describeLoads([undefined, { sequences: 1, kvTokens: 8000 }, { sequences: 2, kvTokens: 31_400 }]),
      'endpoint 1: idle or not known; endpoint 2: 1 other request running, 8,000 KV tokens; endpoint 3: 2 other requests running, 31.4K KV tokens',
    );
    assert.equal(describeLoads([{ sequences: 0, kvTokens: 0 }]), undefined);
  });

  it('lists the options ruled out before they could be simulated after every option with a time, ruled out or not', () => {
    // Cache-aligned workers and the sequential call carry the whole head and do not fit 5,000 tokens; some
    // target-block plans fit and slow the agent too much, so the ruled-out options are of both kinds.
    const r = planWork(
      input({ head: { ...uniformHead(6000), tailTokens: 4000 }, background: { maxSlowdown: 1.2 }, blockSizes: [1024, 2048], window: 5000 }),
    );
    const alts = r.choice.alternatives;
    assert.ok(alts.some((a) => a.predictedMs === null));
    assert.ok(
      alts.some((a) => a.predictedMs !== null && a.excluded),
      alts.map((a) => `${a.label} ${a.predictedMs} ${a.excluded}`).join('; '),
    );
    const lastTimed = alts.map((a) => a.predictedMs !== null).lastIndexOf(true);
    assert.ok(alts.findIndex((a) => a.predictedMs === null) > lastTimed, alts.map((a) => a.label).join(', '));
  });

  it('a worker that would not fit the window is ruled out with the reason', () => {
    const r = planWork(input({ window: 2000, blockSizes: [1024] }));
    const seq = r.choice.alternatives.find((a) => a.mode === 'sequential' && a.layout === 'target-block')!;
    assert.match(seq.excluded!, /do not fit the 2000-token window/);
    // Ruled out before it was simulated: no time, and listed after every option that has one.
    assert.equal(seq.predictedMs, null);
    const timed = r.choice.alternatives.map((a) => a.predictedMs !== null).lastIndexOf(true);
    assert.ok(r.choice.alternatives.indexOf(seq) > timed, r.choice.alternatives.map((a) => a.label).join(', '));
    assert.equal(r.choice.chosen.excluded, undefined);
  });
});
