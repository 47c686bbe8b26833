/**
 * What a benchmark or the planner reads from the simulator: /metrics against
 * the per-request records, GET /sim/clock and /sim/stats, the clock's pacing
 * of real time, and profile files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { parseSimArgs } from '../sim/cli';
import { startSimulator, type SimHandle, type SimOptions } from '../sim/server';

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  assert.ok(line, `metric ${name} present`);
  return Number(line.split(' ').pop());
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(cond(), what);
};

describe('simulator metrics, clock and profiles', () => {
  let sim: SimHandle | undefined;
  const start = async (o: SimOptions = {}) => {
    sim = await startSimulator({ tokenizer: 'char', profile: 'unit', timeScale: 0, ...o });
    return sim;
  };
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  const chat = (s: SimHandle, content: string) =>
    new OpenAI({ baseURL: s.url, apiKey: 'none' }).chat.completions.create({ model: s.model, messages: [{ role: 'user', content }] });
  const scrape = async (s: SimHandle) => (await fetch(`${s.origin}/metrics`)).text();

  it('latency histograms and counters agree with the per-request records', async () => {
    const s = await start({
      maxNumSeqs: 2,
      script: {
        replies: [
          { match: 'long', content: 'y'.repeat(40), repeat: true },
          { content: 'z'.repeat(7), repeat: true },
        ],
      },
    });
    s.pauseScheduler();
    const sent = [chat(s, `long ${'a'.repeat(1500)}`), chat(s, 'short one'), chat(s, `long ${'a'.repeat(1500)}`), chat(s, 'short two')];
    await until(() => s.stats.queued === 4, 'all queued');
    const paused = await scrape(s);
    assert.equal(metric(paused, 'vllm:num_requests_waiting'), 4);
    assert.equal(metric(paused, 'vllm:num_requests_running'), 0);
    s.resumeScheduler();
    await Promise.all(sent);
    const m = await scrape(s);
    const recs = s.stats.requests;
    const sum = (f: (r: (typeof recs)[number]) => number) => recs.reduce((a, r) => a + f(r), 0);
    const close = (got: number, want: number, what: string) => assert.ok(Math.abs(got - want) < 1e-9, `${what}: ${got} vs ${want}`);
    assert.equal(metric(m, 'vllm:time_to_first_token_seconds_count'), 4);
    close(metric(m, 'vllm:time_to_first_token_seconds_sum'), sum((r) => r.firstToken! - r.arrival) / 1000, 'TTFT sum');
    assert.equal(
      metric(m, 'vllm:inter_token_latency_seconds_count'),
      sum((r) => r.completionTokens - 1),
    );
    close(metric(m, 'vllm:inter_token_latency_seconds_sum'), sum((r) => r.finished! - r.firstToken!) / 1000, 'TPOT sum');
    close(metric(m, 'vllm:e2e_request_latency_seconds_sum'), sum((r) => r.finished! - r.arrival) / 1000, 'e2e sum');
    assert.equal(
      metric(m, 'vllm:prefix_cache_queries_total'),
      sum((r) => r.promptTokens),
    );
    assert.equal(
      metric(m, 'vllm:prefix_cache_hits_total'),
      sum((r) => r.cachedTokens),
    );
    assert.ok(recs[2].cachedTokens > 0, 'the repeated long prompt hit');
    assert.equal(metric(m, 'vllm:num_requests_running'), 0);
    assert.equal(metric(m, 'vllm:kv_cache_usage_perc'), 0);
    // every observation fell into some bucket: the +Inf bucket equals the count
    assert.doesNotMatch(m, /time_per_output_token/, 'a current vLLM no longer exports the old name');
    assert.match(m, /vllm:inter_token_latency_seconds_bucket\{[^}]*le="\+Inf"\} 90\.0/);
  });

  it('while sequences run: running, waiting and KV usage in blocks held', async () => {
    const s = await start({ timeScale: 0.3, maxNumSeqs: 2, script: { replies: [{ content: 'y'.repeat(30), repeat: true }] } });
    // prompts of 100 tokens = 7 blocks of 16 each, no shared prefix
    const sent = ['a', 'b', 'c'].map((ch) => chat(s, ch.repeat(81)));
    await until(() => s.stats.running === 2 && s.stats.queued === 1, 'two running, one waiting');
    const m = await scrape(s);
    assert.equal(metric(m, 'vllm:num_requests_running'), 2);
    assert.equal(metric(m, 'vllm:num_requests_waiting'), 1);
    assert.equal(metric(m, 'vllm:kv_cache_usage_perc'), 14 / (UNIT_PROFILE.kvCapacityTokens / 16));
    await Promise.all(sent);
  });

  it('GET /sim/clock is simulated now; /sim/stats carries the records with simulated times', async () => {
    const s = await start({ script: { replies: [{ content: 'y'.repeat(3), repeat: true }] } });
    await chat(s, 'hello');
    const clock = (await (await fetch(`${s.origin}/sim/clock`)).json()) as Record<string, unknown>;
    const rec = s.stats.requests[0];
    // one prefill step, two decode steps
    assert.equal(clock.steps, 3);
    assert.equal(clock.nowMs, rec.finished);
    assert.equal(clock.busyMs, rec.finished);
    assert.deepEqual([clock.profile, clock.timeScale, clock.running, clock.waiting], ['unit', 0, 0, 0]);
    const stats = (await (await fetch(`${s.origin}/sim/stats`)).json()) as { requests: Array<Record<string, unknown>>; clock: unknown };
    assert.deepEqual(stats.clock, clock);
    assert.deepEqual(stats.requests[0], JSON.parse(JSON.stringify(rec)));
  });

  it('time scale paces real time to simulated time; idle time follows real time divided by the scale', async () => {
    const s = await start({ timeScale: 0.5, script: { replies: [{ content: 'y'.repeat(21), repeat: true }] } });
    const t0 = performance.now();
    await chat(s, 'pace');
    const real = performance.now() - t0;
    const rec = s.stats.requests[0];
    const simMs = rec.finished! - rec.firstToken! + 10; // 20 decode steps + 1 prefill step
    assert.ok(simMs > 200);
    assert.ok(real >= 0.5 * simMs * 0.95, `real ${real} ms for ${simMs} simulated ms at scale 0.5`);
    const before = s.clock().nowMs;
    const r0 = performance.now();
    await new Promise((r) => setTimeout(r, 60));
    const idle = s.clock().nowMs - before;
    const idleReal = performance.now() - r0;
    assert.ok(Math.abs(idle - idleReal / 0.5) < 1, `${idleReal} real ms idle = ${idle} simulated ms`);
  });

  it('--profile-file loads a validated PerfProfile; bad files and names get clear errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-profile-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ ...UNIT_PROFILE, name: 'mine', maxNumSeqs: 3 }));
    const o = parseSimArgs(['--profile-file', good, '--max-num-batched-tokens', '64']);
    const s = await start({ profile: o.profile, maxNumBatchedTokens: o.maxNumBatchedTokens });
    assert.deepEqual([s.profile.name, s.profile.maxNumSeqs, s.profile.maxNumBatchedTokens], ['mine', 3, 64]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...UNIT_PROFILE, maxNumSeqs: -1, step: { minStepMs: 'fast' } }));
    assert.throws(
      () => parseSimArgs(['--profile-file', bad]),
      (e: Error) => e.message.includes(bad) && /maxNumSeqs/.test(e.message) && /step\.minStepMs/.test(e.message),
    );
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, '{ nope');
    assert.throws(() => parseSimArgs(['--profile-file', notJson]), /is not JSON/);
    assert.throws(() => parseSimArgs(['--profile-file', join(dir, 'missing.json')]), /cannot read profile file/);
    await assert.rejects(startSimulator({ profile: 'a100' }), /unknown profile "a100" \(known: h100-7b, unit/);
  });
});
