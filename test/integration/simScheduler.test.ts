/**
 * The step scheduler's simulated times, computed by hand on the unit profile
 * (a step costs max(10, 0.01 × prefill tokens) ms, plus 1 ms per 1,000 KV
 * tokens the decoding sequences hold; 1,000 tokens per step, 4 sequences),
 * over real HTTP with the openai client.
 *
 * With the char tokenizer a one-message chat of k characters is k + 19 prompt
 * tokens (<|im_start|>user\n … <|im_end|>\n<|im_start|>assistant\n), and a
 * scripted reply of n characters is n completion tokens.
 */
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { startReplicas } from '../sim/replicas';
import { startSimulator, type SimHandle, type SimOptions } from '../sim/server';
import type { RequestRecord } from '../sim/stats';

const near = (got: number | undefined, want: number, what: string) =>
  assert.ok(got !== undefined && Math.abs(got - want) < 1e-6, `${what}: ${got} ≠ ${want}`);

/** A chat whose prompt is exactly `tokens` tokens (char tokenizer), starting with `tag`. */
const prompt = (tag: string, tokens: number) => [{ role: 'user' as const, content: tag + 'x'.repeat(tokens - 19 - tag.length) }];

/** Scripted replies: a request whose prompt contains `tag` gets `n` completion tokens. */
const replies = (spec: Record<string, number>) => ({
  replies: Object.entries(spec).map(([tag, n]) => ({ match: tag, content: 'y'.repeat(n), repeat: true })),
});

describe('simulator step scheduler (unit profile, hand-computed simulated times)', () => {
  let sims: SimHandle[] = [];
  const start = async (o: SimOptions) => {
    const s = await startSimulator({ tokenizer: 'char', profile: 'unit', timeScale: 0, maxModelLen: 100_000, ...o });
    sims.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(sims.map((s) => s.close()));
    sims = [];
  });

  const chat = (sim: SimHandle, tag: string, tokens: number) =>
    new OpenAI({ baseURL: sim.url, apiKey: 'none' }).chat.completions.create({ model: sim.model, messages: prompt(tag, tokens) });

  /** Sends the requests while the scheduler is paused, so that they all wait and are admitted from one instant. */
  async function together(sim: SimHandle, reqs: Array<[string, number]>): Promise<RequestRecord[]> {
    sim.pauseScheduler();
    const before = sim.stats.requests.length;
    const done = [] as Array<Promise<unknown>>;
    for (const [tag, tokens] of reqs) {
      done.push(chat(sim, tag, tokens));
      // Fix the arrival (FIFO) order.
      while (sim.stats.queued < done.length) await new Promise((r) => setTimeout(r, 2));
    }
    sim.resumeScheduler();
    await Promise.all(done);
    return sim.stats.requests.slice(before);
  }

  it('(a) one request: chunked prefill, then one decode step per further token with its own KV', async () => {
    const sim = await start({ script: replies({ A: 5 }) });
    const r = await chat(sim, 'A', 2500);
    assert.equal(r.usage?.completion_tokens, 5);
    const [rec] = sim.stats.requests;
    // prefill 1000 + 1000 + 500 tokens: 3 steps of max(10, 0.01 × n) = 10 ms
    assert.equal(rec.prefillSteps, 3);
    near(rec.arrival, 0, 'arrival');
    near(rec.admitted, 0, 'admitted');
    near(rec.firstToken, 30, 'first token');
    // 4 decode steps, each 10 ms + (2500 + tokens so far) / 1000 ms
    near(rec.finished, 30 + 12.501 + 12.502 + 12.503 + 12.504, 'finished');
    near(rec.tpotMs, (12.501 + 12.502 + 12.503 + 12.504) / 4, 'time per output token');
    near(sim.clock().nowMs, rec.finished!, 'the clock stopped at the last step (time scale 0: idle counts zero)');
    assert.equal(sim.stats.steps, 7);
  });

  it('(b) two requests share steps: one prefill step for both, decode batched with their KV added', async () => {
    const sim = await start({ script: replies({ A: 5, B: 3 }) });
    const [a, b] = await together(sim, [
      ['A', 500],
      ['B', 500],
    ]);
    // step 1: both admitted, 1000 prefill tokens → 10 ms
    for (const r of [a, b]) near(r.firstToken, 10, `${r.id} first token`);
    // steps 2-3: both decode, KV (500 + 1) × 2 then (500 + 2) × 2
    near(b.finished, 10 + 11.002 + 11.004, 'B finished');
    // steps 4-5: A alone
    near(a.finished, 10 + 11.002 + 11.004 + 10.503 + 10.504, 'A finished');
    assert.equal(sim.stats.steps, 5, 'not 5 + 3: decode is batched');
    assert.equal(sim.stats.maxRunning, 2);
  });

  it('(c) a long prefill is chunked around a running decode, each chunk paying attention on what it already holds', async () => {
    const attention = { ...UNIT_PROFILE, name: 'unit-attention', step: { ...UNIT_PROFILE.step, attentionMsPerPair: 1e-5 } };
    const sim = await start({ profile: attention, script: replies({ A: 5, B: 5 }) });
    const [a, b] = await together(sim, [
      ['A', 500],
      ['B', 2000],
    ]);
    // step 1: A 500 new (held 0), B 500 of 2000 (held 0): 10 + 1e-5 × 2 × 500 × 250
    const s1 = 10 + 1e-5 * (500 * 250 * 2);
    // step 2: A decodes (KV 501), B gets 999 tokens on 500 held
    const s2 = 10 + 1e-5 * 999 * (500 + 999 / 2) + 0.501;
    // step 3: A decodes (KV 502), B's last 501 tokens on 1499 held
    const s3 = 10 + 1e-5 * 501 * (1499 + 501 / 2) + 0.502;
    near(a.firstToken, s1, 'A first token');
    near(b.firstToken, s1 + s2 + s3, 'B first token');
    assert.equal(b.prefillSteps, 3);
    // steps 4-5: both decode: KV 503 + 2001, 504 + 2002; A is done
    near(a.finished, s1 + s2 + s3 + 12.504 + 12.506, 'A finished');
    // steps 6-7: B alone, KV 2003, 2004
    near(b.finished, s1 + s2 + s3 + 12.504 + 12.506 + 12.003 + 12.004, 'B finished');
  });

  it('(d) beyond max-num-seqs requests wait FIFO, and the wait counts in their time to first token', async () => {
    const sim = await start({ maxNumSeqs: 2, script: replies({ R: 3 }) });
    const [r1, r2, r3] = await together(sim, [
      ['R1', 100],
      ['R2', 100],
      ['R3', 100],
    ]);
    assert.equal(sim.stats.maxRunning, 2);
    assert.equal(sim.stats.maxQueued, 3);
    // R1, R2: one prefill step (10), two decode steps with KV 2 × 101 and 2 × 102
    for (const r of [r1, r2]) near(r.finished, 10 + 10.202 + 10.204, 'R1/R2 finished');
    // R3 is admitted at the next step, then runs alone
    near(r3.admitted, 30.406, 'R3 admitted when a slot freed');
    near(r3.firstToken, 40.406, 'R3 first token');
    near(r3.finished, 40.406 + 10.101 + 10.102, 'R3 finished');
    near(r3.arrival, 0, 'R3 arrived with the others');
    const metrics = sim.metricsText();
    // TTFT sum: 0.010 + 0.010 + 0.040406 s
    assert.match(metrics, /vllm:time_to_first_token_seconds_sum\{[^}]*\} 0\.0604\d*/);
  });

  it('(e) a prefix-cache hit skips its prefill: only the tokens after the cached blocks are computed', async () => {
    const sim = await start({ script: replies({ A: 5 }) });
    await chat(sim, 'A', 2500);
    const r = await chat(sim, 'A', 2500);
    const [first, second] = sim.stats.requests;
    // floor((2500 - 1) / 16) blocks of 16 hit; 4 tokens remain: one 10 ms step instead of three
    assert.equal(r.usage?.prompt_tokens_details?.cached_tokens, 2496);
    assert.equal(second.prefillSteps, 1);
    near(second.arrival, first.finished!, 'arrives when the first ended (idle gaps count zero)');
    near(second.firstToken! - second.arrival, 10, 'time to first token');
    // decode is unchanged: the sequence still holds its whole 2500-token prefix
    near(second.finished! - second.firstToken!, 12.501 + 12.502 + 12.503 + 12.504, 'decode');
  });

  it('(f) replicas are independent: own ports, clocks, batches and prefix caches', async () => {
    const reps = await startReplicas(2, {
      tokenizer: 'char',
      profile: 'unit',
      timeScale: 0,
      maxModelLen: 100_000,
      script: replies({ A: 5 }),
    });
    sims.push(...reps);
    assert.equal(reps[1].port, reps[0].port + 1);
    // the same request on both at once: each runs alone (no shared batch), as (a)
    await Promise.all(reps.map((s) => chat(s, 'A', 2500)));
    for (const s of reps) {
      const [rec] = s.stats.requests;
      near(rec.firstToken, 30, 'first token');
      near(rec.finished, 30 + 12.501 + 12.502 + 12.503 + 12.504, 'finished');
    }
    // a new prompt seen by replica 0 is cached there, not on replica 1
    await chat(reps[0], 'A-new', 3000);
    const again = await chat(reps[0], 'A-new', 3000);
    const other = await chat(reps[1], 'A-new', 3000);
    assert.equal(again.usage?.prompt_tokens_details?.cached_tokens, 2992);
    assert.equal(other.usage?.prompt_tokens_details?.cached_tokens, 0);
  });

  it("h100-7b: 8 sequences decoding 32K each step at the calibration's 11.1 ms", async () => {
    // 8 prompts of exactly 32,768 tokens sharing a 32,737-character system message; the first decodes longest.
    const system = 'S'.repeat(32_737);
    const sim = await start({
      profile: 'h100-7b',
      script: {
        replies: [
          { match: 'q0', content: 'y'.repeat(100) },
          { content: 'z'.repeat(51), repeat: true },
        ],
      },
    });
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'none' });
    sim.pauseScheduler();
    const done: Array<Promise<unknown>> = [];
    for (let i = 0; i < 8; i++) {
      const messages = [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: `q${i}` },
      ];
      assert.equal(sim.tokenize(messages).length, 32_768);
      done.push(client.chat.completions.create({ model: sim.model, messages }));
      while (sim.stats.queued < done.length) await new Promise((r) => setTimeout(r, 2));
    }
    sim.resumeScheduler();
    await Promise.all(done);
    const recs = sim.stats.requests;
    // Sequences 2-8 start decoding together and finish while the first still decodes: all their steps had 8 decoders.
    const tpots = recs.slice(1).map((r) => (r.finished! - r.firstToken!) / 50);
    for (const t of tpots) assert.ok(Math.abs(t - 11.1) / 11.1 < 0.01, `time per output token ${t} ms vs the calibration's 11.1 ms`);
    assert.ok(
      recs.slice(1).every((r) => r.cachedTokens === 32_752),
      'the shared system prompt was cached once',
    );
  });
});
