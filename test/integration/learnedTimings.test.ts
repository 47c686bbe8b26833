/**
 * The agent's learned timings over real HTTP through the paced transport, against the simulator's own record of
 * each request. The transport hands a stream on in ~100 ms batches; the times the profile learns must be those of
 * the bytes, not of the batches, or every prefill looks like at least one interval (review: a prefill base of
 * 102 ms against a true 3.1 ms).
 */
import { strict as assert } from 'node:assert';
import { defaultSettings } from '../../src/core/config/settings';
import { learnProfile, type DecodeObservation, type PrefillObservation } from '../../src/core/perf/learn';
import { H100_7B } from '../../src/core/perf/profile';
import { MemoryLog } from '../../src/host/log';
import { buildEndpoints } from '../../src/host/modelPorts';
import { createPacedFetch } from '../../src/llm/pacedFetch';
import { startSimulator, type SimHandle } from '../sim';

describe('learned timings through the paced transport', () => {
  let sim: SimHandle;
  const transport = createPacedFetch(); // the shared transport's code and default 100 ms batches, closable here

  before(async () => {
    // One token per character (cheap to tokenize, so the server's clock starts soon after ours); 160-token replies.
    sim = await startSimulator({ timeScale: 1, tokenizer: 'char', script: [{ content: 'word '.repeat(32), repeat: true }] });
  });
  after(async () => {
    transport.close();
    await sim.close();
  });

  it("learns the server's time to first token and per output token, not the transport's batches", async function () {
    this.timeout(30_000);
    const prefill: PrefillObservation[] = [];
    const decode: DecodeObservation[] = [];
    const sink = { addPrefill: (p: PrefillObservation) => prefill.push(p), addDecode: (d: DecodeObservation) => decode.push(d) };
    const e = buildEndpoints({ ...defaultSettings(), endpoint: sim.url }, undefined, new MemoryLog(), () => undefined, sink, transport);
    // The first request through a fresh process compiles the client's and the server's paths: not measured.
    await e.agent.chat({ messages: [{ role: 'user', content: 'warm up' }], maxTokens: 200 });
    prefill.length = decode.length = 0;
    const rows: string[] = [];
    const excess: number[] = [];
    const tpotError: number[] = [];
    for (let i = 0; i < 6; i++) {
      // A tag first, so that no prompt shares a cached block with another: every token is prefilled.
      const content = `q${i} ` + 'x'.repeat(300 + 1200 * i);
      let deltas = 0;
      await e.agent.chat({ messages: [{ role: 'user', content }], maxTokens: 200 }, { onDelta: () => deltas++ });
      const r = sim.stats.requests.at(-1)!;
      const p = prefill[i];
      const d = decode[i];
      assert.ok(p && d, `request ${i} was learned (${prefill.length} prefill, ${decode.length} decode observations)`);
      assert.equal(p.newTokens, r.promptTokens - r.cachedTokens);
      // Simulated ms are real ms at time scale 1.
      const serverTtft = r.firstToken! - r.arrival;
      excess.push(p.ttftMs - serverTtft);
      tpotError.push(d.tpotMs / r.tpotMs! - 1);
      rows.push(
        `${p.newTokens} new: ttft ${p.ttftMs.toFixed(1)} ms (server ${serverTtft.toFixed(1)}), tpot ${d.tpotMs.toFixed(2)} (${r.tpotMs!.toFixed(2)})`,
      );
      assert.ok(deltas > 1, 'the reply streamed in several batches');
    }
    const detail = rows.join('; ');
    // Ours starts when the request's last byte went to the kernel, the server's once it has parsed and tokenized the
    // prompt: the difference is that, the loopback, and the event loop the two share (2–5 ms here). The defect put
    // the pacing interval there, 50–190 ms. 15 ms on average, 40 at most, leave room for a busy 2-core machine.
    const mean = excess.reduce((a, b) => a + b, 0) / excess.length;
    assert.ok(mean < 15 && Math.max(...excess) < 40 && Math.min(...excess) > -2, `ttft minus the server's: ${detail}`);
    // A reply's end is known to within the hold it came in (±50 ms on a 1 s decode): 5 % on average.
    const tpotMean = tpotError.reduce((a, b) => a + Math.abs(b), 0) / tpotError.length;
    assert.ok(tpotMean < 0.05, `time per output token: ${detail}`);
    // What the planner gets: a prefill base near h100-7b's 3.1 ms (the batches' times fitted 102 ms).
    const fitted = learnProfile(H100_7B, { prefill, decode }, 'learned', 'test').step;
    assert.ok(fitted.prefillBaseMs < 20, `prefill base ${fitted.prefillBaseMs} ms; ${detail}`);
  });
});
