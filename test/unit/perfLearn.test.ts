import { strict as assert } from 'node:assert';
import { ProfileLearner, learnProfile, leastSquares } from '../../src/core/perf/learn';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import type { ModelPort } from '../../src/core/ports';
import { TimedModel } from '../../src/llm/timing';
import { parseVllmMetrics, serverLoadOf } from '../../src/llm/vllmMetrics';
import { describeLoads } from '../../src/core/perf/serverLoad';

describe('learned profile', () => {
  it('least squares solves an exact system', () => {
    const b = leastSquares(
      [
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      [5, 7, 9],
    )!;
    assert.ok(Math.abs(b[0]! - 3) < 1e-9 && Math.abs(b[1]! - 2) < 1e-9);
    assert.equal(
      leastSquares(
        [
          [1, 1],
          [2, 2],
        ],
        [1, 2],
      ),
      undefined,
    );
  });

  it('fits prefill and decode coefficients to timings made by the step formula', () => {
    // Truth: 2 ms per chunk of 1,000, 0.03 ms per token, 1e-6 per pair; decode 8 ms + 0.5 ms per 1K KV.
    const ttft = (n: number) => 2 * Math.ceil(n / 1000) + 0.03 * n + 1e-6 * n * (n / 2);
    const learner = new ProfileLearner(UNIT_PROFILE);
    for (const n of [500, 2000, 6000, 12000]) learner.addPrefill({ newTokens: n, cachedTokens: 0, ttftMs: ttft(n) });
    for (const kv of [1000, 40_000]) learner.addDecode({ kvTokens: kv, tpotMs: 8 + 0.5 * (kv / 1000) });
    const p = learner.profile('learned', 'test');
    const near = (a: number, b: number) => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, b) + 1e-9, `${a} vs ${b}`);
    near(p.step.prefillBaseMs, 2);
    near(p.step.prefillMsPerToken, 0.03);
    near(p.step.attentionMsPerPair, 1e-6);
    near(p.step.minStepMs, 8);
    near(p.step.decodeKvMsPerKToken, 0.5);
    assert.equal(p.maxNumSeqs, UNIT_PROFILE.maxNumSeqs);
  });

  it('keeps the base where the observations cannot pin a term down', () => {
    const p = learnProfile(UNIT_PROFILE, { prefill: [{ newTokens: 100, cachedTokens: 0, ttftMs: 5 }], decode: [] }, 'x', 'y');
    assert.deepEqual(p.step, UNIT_PROFILE.step);
  });

  it('the timing wrapper records TTFT against uncached tokens and TPOT against KV, when alone', async () => {
    let t = 0;
    const inner: ModelPort = {
      chat: async (_req, opts) => {
        t += 40; // prefill
        opts?.onDelta?.({ type: 'content', text: 'a' });
        t += 90; // 9 more tokens at 10 ms
        return {
          message: { role: 'assistant', content: 'a'.repeat(10) },
          usage: { promptTokens: 1000, completionTokens: 10, cachedTokens: 200 },
          finishReason: 'stop',
        };
      },
    };
    const pre: unknown[] = [];
    const dec: unknown[] = [];
    const m = new TimedModel(
      inner,
      { addPrefill: (o) => pre.push(o), addDecode: (o) => dec.push(o) },
      () => 0,
      () => t,
    );
    await m.chat({ messages: [{ role: 'user', content: 'x' }] });
    assert.deepEqual(pre, [{ newTokens: 800, cachedTokens: 200, ttftMs: 40 }]);
    assert.deepEqual(dec, [{ kvTokens: 1005, tpotMs: 10 }]);
    const busy = new TimedModel(
      inner,
      { addPrefill: (o) => pre.push(o), addDecode: (o) => dec.push(o) },
      () => 3,
      () => t,
    );
    await busy.chat({ messages: [{ role: 'user', content: 'x' }] });
    assert.equal(pre.length, 1, 'not learned while other requests share the server');
    const unreported = new TimedModel(
      {
        chat: async (req, opts) => ({
          ...(await inner.chat(req, opts)),
          usage: { promptTokens: 1000, completionTokens: 10, cachedTokens: undefined },
        }),
      },
      { addPrefill: (o) => pre.push(o), addDecode: (o) => dec.push(o) },
      () => 0,
      () => t,
    );
    await unreported.chat({ messages: [{ role: 'user', content: 'x' }] });
    assert.equal(pre.length, 1, 'no prefill observation when the server does not say what was cached');
    assert.equal(dec.length, 2, 'the decode observation stands');
  });

  it('reads vLLM metrics: gauges, histogram sums and counts, KV capacity', () => {
    const m = parseVllmMetrics(
      [
        '# HELP vllm:num_requests_running x',
        'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
        'vllm:kv_cache_usage_perc{engine="0"} 0.25',
        'vllm:time_per_output_token_seconds_sum{engine="0"} 1.5',
        'vllm:time_per_output_token_seconds_count{engine="0"} 150.0',
        'vllm:time_to_first_token_seconds_sum{engine="0"} 2',
        'vllm:time_to_first_token_seconds_count{engine="0"} 4',
        'vllm:cache_config_info{block_size="16",num_gpu_blocks="1000"} 1.0',
      ].join('\n'),
    );
    assert.deepEqual(m, { running: 3, kvUsage: 0.25, tpot: { sum: 1.5, count: 150 }, ttft: { sum: 2, count: 4 }, kvCapacityTokens: 16000 });
  });

  it("a data-parallel server's gauges come per engine: its load is planned as one engine's, the mean, and said so", () => {
    // vLLM's PrometheusStatLogger labels every gauge with its engine, and writes cache_config_info once per engine.
    const m = parseVllmMetrics(
      [
        'vllm:num_requests_running{engine="0",model_name="m"} 10.0',
        'vllm:num_requests_running{engine="1",model_name="m"} 6.0',
        'vllm:num_requests_waiting{engine="0",model_name="m"} 2.0',
        'vllm:num_requests_waiting{engine="1",model_name="m"} 0.0',
        'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5',
        'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.3',
        // The front end sums the engines' blocks into the one config every engine's line repeats.
        'vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="20000"} 1.0',
        'vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="20000"} 1.0',
      ].join('\n'),
    );
    assert.deepEqual(m, { running: 16, waiting: 2, kvUsage: 0.8, kvCapacityTokens: 160_000, engines: 2 });
    const load = serverLoadOf(m, () => 1);
    assert.deepEqual(load, { sequences: 8, waiting: 1, kvTokens: 64_000, engines: 2 });
    assert.equal(describeLoads([load]), 'the server: per engine of 2, 8 other requests running, 64.0K KV tokens, 1 waiting');
    // A request on a server of three engines is still someone's load, rounded up per engine.
    assert.deepEqual(
      serverLoadOf({ running: 1, kvUsage: 0.03, kvCapacityTokens: 100_000, engines: 3 }, () => 1),
      {
        sequences: 1,
        kvTokens: 1000,
        engines: 3,
      },
    );
    // One engine: the sums are its own.
    assert.deepEqual(
      serverLoadOf({ running: 3, kvUsage: 0.25, kvCapacityTokens: 16_000 }, () => 1),
      { sequences: 3, kvTokens: 4000 },
    );
  });

  it('calibration takes the time per token from the inter-token sum, also when one output carries several tokens', async () => {
    const { serverTimes } = await import('../../src/cli/calibrate');
    const at = (ttft: number, itlSum: number, itlCount: number) => ({
      ttft: { sum: ttft, count: 1 },
      tpot: { sum: itlSum, count: itlCount },
    });
    // 121 tokens: 120 outputs after the first, 1.2 s from the first token to the last: 10 ms per token.
    assert.deepEqual(serverTimes(at(0, 0, 0), { ...at(0.5, 1.2, 120), ttft: { sum: 0.5, count: 2 } }, 121), { ttftMs: 500, tpotMs: 10 });
    // Speculative decoding: the same 120 tokens in 40 outputs over the same time. Per output it would be 30 ms.
    assert.deepEqual(serverTimes(at(0, 0, 0), { ...at(0.5, 1.2, 40), ttft: { sum: 0.5, count: 2 } }, 121), { ttftMs: 500, tpotMs: 10 });
    // Another client's request running at a read: its outputs may be in the sum; no decode time.
    assert.equal(serverTimes(at(0, 0, 0), { ...at(0.5, 1.2, 40), ttft: { sum: 0.5, count: 2 }, running: 1 }, 121)?.tpotMs, undefined);
    // More observations than tokens: another request's; no decode time.
    assert.equal(serverTimes(at(0, 0, 0), { ...at(0.5, 3, 300), ttft: { sum: 0.5, count: 2 } }, 121)?.tpotMs, undefined);
  });

  it("reads a current vLLM's inter-token histogram, and prefers it where a server exports both names", () => {
    const current = parseVllmMetrics(
      ['vllm:inter_token_latency_seconds_sum{engine="0"} 0.9', 'vllm:inter_token_latency_seconds_count{engine="0"} 90.0'].join('\n'),
    );
    assert.deepEqual(current.tpot, { sum: 0.9, count: 90 });
    const both = parseVllmMetrics(
      [
        'vllm:time_per_output_token_seconds_sum{engine="0"} 5',
        'vllm:time_per_output_token_seconds_count{engine="0"} 50',
        'vllm:inter_token_latency_seconds_sum{engine="0"} 0.9',
        'vllm:inter_token_latency_seconds_count{engine="0"} 90.0',
        'vllm:gpu_cache_usage_perc{engine="0"} 0.5',
        'vllm:kv_cache_usage_perc{engine="0"} 0.25',
      ].join('\n'),
    );
    assert.deepEqual([both.tpot, both.kvUsage], [{ sum: 0.9, count: 90 }, 0.25]);
    // A histogram with a sum and no count is not read as one.
    assert.equal(parseVllmMetrics('vllm:inter_token_latency_seconds_sum 1').tpot, undefined);
  });
});

describe("profiles kept in the host's globalState", () => {
  it('stores per endpoint and falls back to the named setting, then h100-7b', async () => {
    const { profileFor, rememberProfile } = await import('../../src/core/perf/profileMemo');
    const { H100_7B } = await import('../../src/core/perf/profile');
    const data = new Map<string, unknown>();
    const memo = { get: <T>(k: string) => data.get(k) as T | undefined, update: async (k: string, v: unknown) => void data.set(k, v) };
    assert.equal(profileFor(memo, 'http://a/v1', undefined), H100_7B);
    await rememberProfile(memo, 'http://a/v1/', { ...UNIT_PROFILE, name: 'learned-a' });
    assert.equal(profileFor(memo, 'http://a/v1', undefined).name, 'learned-a');
    assert.equal(profileFor(memo, 'http://a/v1', 'h100-7b'), H100_7B);
    assert.equal(profileFor(memo, 'http://b/v1', undefined), H100_7B);
  });
});
