/**
 * The planner's step model (src/core/perf/stepSim.ts) against the simulator
 * it predicts, on the h100-7b profile, over real HTTP: the same requests must
 * take the same simulated time. The requests are queued before the scheduler
 * starts, so the simulator's run is exactly reproducible.
 */
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { H100_7B } from '../../src/core/perf/profile';
import { simulateSteps } from '../../src/core/perf/stepSim';
import { startSimulator } from '../sim/server';

describe('simulator ↔ planner step model (h100-7b)', () => {
  async function measure(workers: number, blockTokens: number, outputTokens: number): Promise<{ simMs: number; predictedMs: number }> {
    const sim = await startSimulator({
      tokenizer: 'char',
      profile: 'h100-7b',
      timeScale: 0,
      maxModelLen: 200_000,
      script: { replies: [{ content: 'y'.repeat(outputTokens), repeat: true }] },
    });
    try {
      const text = 'abcdefghij'.repeat(Math.ceil((workers * blockTokens) / 10));
      // Cache-aligned workers: worker i replays the head up to the end of its block, then its instruction.
      const prompts = Array.from({ length: workers }, (_, i) => [
        { role: 'user' as const, content: `${text.slice(0, blockTokens * (i + 1))}\nSUMMARISE ${i}` },
      ]);
      const lengths = prompts.map((m) => sim.tokenize(m).length);
      const client = new OpenAI({ baseURL: sim.url, apiKey: 'none' });
      sim.pauseScheduler();
      const sent = prompts.map((messages) =>
        client.chat.completions.create({ model: sim.model, messages, stream: true }).then(async (s) => {
          for await (const _ of s) void _;
        }),
      );
      while (sim.stats.queued < workers) await new Promise((r) => setTimeout(r, 2));
      // FIFO order is arrival order over HTTP: give the planner the same order.
      const order = sim.stats.requests.map((r) => lengths.indexOf(r.promptTokens));
      sim.resumeScheduler();
      await Promise.all(sent);
      const simMs = Math.max(...sim.stats.requests.map((r) => r.finished!));
      const requests = prompts.map((_, i) => ({ promptTokens: lengths[i], sharedTokens: 6 + blockTokens * (i + 1), outputTokens }));
      const predictedMs = simulateSteps(requests, {
        profile: H100_7B,
        order,
        concurrency: workers,
        replicas: 1,
        warmSharedTokens: 0,
      }).wallMs;
      return { simMs, predictedMs };
    } finally {
      await sim.close();
    }
  }

  it('21 cache-aligned workers of 4,096 tokens, all in flight: the same simulated wall time within 1 %', async () => {
    const { simMs, predictedMs } = await measure(21, 4096, 1000);
    assert.ok(simMs > 20_000, `${simMs} ms`);
    assert.ok(Math.abs(predictedMs - simMs) / simMs < 0.01, `planner ${predictedMs} ms vs simulator ${simMs} ms`);
  });

  it('one sequential call over a 90K head writing 2,048 tokens: about 24 s, as the issue measured, and as predicted', async () => {
    const { simMs, predictedMs } = await measure(1, 90_000, 2048);
    assert.ok(Math.abs(simMs - 24_000) / 24_000 < 0.05, `${simMs} ms`);
    assert.ok(Math.abs(predictedMs - simMs) / simMs < 0.01, `planner ${predictedMs} ms vs simulator ${simMs} ms`);
  });
});
