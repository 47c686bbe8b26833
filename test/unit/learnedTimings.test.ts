/**
 * Which of the agent's requests teach the learned profile (src/llm/timing.ts): a retried one does not (its first
 * token came after a failed attempt and the backoff), nor one that shared the server with anyone at any time while
 * it ran (sent, first token, batches, end), including our own judge calls, which no limiter counts.
 */
import { strict as assert } from 'node:assert';
import { defaultSettings, type SplitpointSettings } from '../../src/core/config/settings';
import type { DecodeObservation, PrefillObservation } from '../../src/core/perf/learn';
import { H100_7B, UNIT_PROFILE } from '../../src/core/perf/profile';
import { profileFor, rememberProfile, type MementoLike } from '../../src/core/perf/profileMemo';
import type { ModelDelta, ModelPort, ModelResult } from '../../src/core/ports';
import { MemoryLog } from '../../src/host/log';
import { buildEndpoints } from '../../src/host/modelPorts';
import { createPacedFetch } from '../../src/llm/pacedFetch';
import { TimedModel, type Neighbours } from '../../src/llm/timing';
import { startSimulator } from '../sim';

/** A fake clock and a model that "prefills" 40 ms and decodes 9 more tokens at 10 ms, calling `during` at each stage. */
function fakeModel(o: { attempts?: number; reset?: boolean; during?: (stage: 'sent' | 'first' | 'decoding') => void } = {}) {
  const clock = { t: 0 };
  const model: ModelPort = {
    chat: async (_req, opts) => {
      o.during?.('sent');
      if (o.reset) {
        clock.t += 30; // a first attempt that streamed a token, then failed
        opts?.onDelta?.({ type: 'content', text: 'x' });
        clock.t += 400; // the backoff
        opts?.onDelta?.({ type: 'reset', attempt: 2, reason: 'The connection was dropped' });
      }
      clock.t += 40;
      o.during?.('first');
      opts?.onDelta?.({ type: 'content', text: 'a' });
      o.during?.('decoding');
      clock.t += 90;
      const r: ModelResult & { attempts: number } = {
        message: { role: 'assistant', content: 'a'.repeat(10) },
        usage: { promptTokens: 1000, completionTokens: 10, cachedTokens: 200 },
        finishReason: 'stop',
        attempts: o.attempts ?? 1,
      };
      return r;
    },
  };
  return { clock, model };
}

function timed(model: ModelPort, clock: { t: number }, others: (() => number) | Neighbours = () => 0) {
  const seen = { prefill: [] as PrefillObservation[], decode: [] as DecodeObservation[] };
  const sink = { addPrefill: (p: PrefillObservation) => seen.prefill.push(p), addDecode: (d: DecodeObservation) => seen.decode.push(d) };
  return { m: new TimedModel(model, sink, others, () => clock.t), seen };
}

const ask = { messages: [{ role: 'user' as const, content: 'x' }] };

describe('learned timings: which requests are learned', () => {
  it('a request that went through once, alone, is learned', async () => {
    const { clock, model } = fakeModel();
    const { m, seen } = timed(model, clock);
    await m.chat(ask);
    assert.deepEqual(seen.prefill, [{ newTokens: 800, cachedTokens: 200, ttftMs: 40 }]);
    assert.deepEqual(seen.decode, [{ kvTokens: 1005, tpotMs: 10 }]);
  });

  it('a retried request is not learned, whether or not the failed attempt had streamed', async () => {
    const retried = fakeModel({ attempts: 2 });
    const a = timed(retried.model, retried.clock);
    await a.m.chat(ask);
    assert.deepEqual(a.seen, { prefill: [], decode: [] }, 'attempts > 1');
    // A port that does not say how many attempts it made still says it started over.
    const reset = fakeModel({ reset: true });
    const b = timed(reset.model, reset.clock);
    const deltas: string[] = [];
    await b.m.chat(ask, { onDelta: (d: ModelDelta) => deltas.push(d.type) });
    assert.deepEqual(b.seen, { prefill: [], decode: [] }, 'a reset delta');
    assert.deepEqual(deltas, ['content', 'reset', 'content'], "the caller's deltas are untouched");
  });

  it('workers that ran at the start and ended before the request did make it not alone', async () => {
    let running = 8;
    const { clock, model } = fakeModel({ during: (s) => s === 'first' && (running = 0) });
    const { m, seen } = timed(model, clock, () => running);
    await m.chat(ask);
    assert.equal(running, 0, 'nothing runs beside it at its end');
    assert.deepEqual(seen, { prefill: [], decode: [] });
  });

  it('a request beside it only at the first token makes it not alone', async () => {
    let running = 0;
    const { clock, model } = fakeModel({ during: (s) => (running = s === 'first' ? 2 : 0) });
    const { m, seen } = timed(model, clock, () => running);
    await m.chat(ask);
    assert.deepEqual(seen, { prefill: [], decode: [] });
  });

  it('a request that started and ended between two looks makes it not alone', async () => {
    const ours = { running: 0, started: 0 };
    // A judge call during the decode: in and out before the next batch of deltas or the end.
    const { clock, model } = fakeModel({ during: (s) => s === 'decoding' && void ours.started++ });
    const { m, seen } = timed(model, clock, { running: () => ours.running, started: () => ours.started });
    await m.chat(ask);
    assert.deepEqual(seen, { prefill: [], decode: [] });
  });

  it("the judge's requests on the agent's server count, those on another server do not", async function () {
    this.timeout(20_000);
    const reply = 'word '.repeat(32); // 160 tokens, about a second at 6.3 ms a token
    const script = [
      { match: 'agent turn', content: reply, repeat: true },
      { match: 'judge turn', content: 'ok', repeat: true },
    ];
    const sim = await startSimulator({ timeScale: 1, tokenizer: 'char', script });
    const other = await startSimulator({ timeScale: 0, tokenizer: 'char', script });
    const transport = createPacedFetch();
    try {
      const learned = async (s: SplitpointSettings) => {
        const prefill: PrefillObservation[] = [];
        const sink = { addPrefill: (p: PrefillObservation) => prefill.push(p), addDecode: () => undefined };
        const e = buildEndpoints(s, undefined, new MemoryLog(), () => undefined, sink, transport);
        let judged: Promise<unknown> | undefined;
        const judge = () => e.judge.chat({ messages: [{ role: 'user', content: 'judge turn' }], maxTokens: 4 });
        await e.agent.chat(
          { messages: [{ role: 'user', content: 'agent turn' }], maxTokens: 200 },
          { onDelta: () => void (judged ??= judge()) },
        );
        await judged;
        return prefill.length;
      };
      const base: SplitpointSettings = { ...defaultSettings(), endpoint: sim.url, judge: { enabled: true, threshold: 7 } };
      assert.equal(await learned(base), 0, "a judge call on the agent's server during the request");
      const [agentRun, judgeRun] = sim.stats.requests;
      assert.ok(
        judgeRun!.arrival > agentRun!.arrival && judgeRun!.finished! < agentRun!.finished!,
        'the judge call ran within the request',
      );
      assert.equal(await learned({ ...base, judgeEndpoint: { endpoint: other.url, model: undefined } }), 1, 'a judge on another server');
    } finally {
      transport.close();
      await sim.close();
      await other.close();
    }
  });

  it("profiles learned from the batches' times, stored before, are not used and go at the next save", async () => {
    const store = new Map<string, unknown>([['splitpoint.perfProfiles', { 'http://a/v1': { ...H100_7B, name: 'learned http://a/v1' } }]]);
    const memo: MementoLike = {
      get: <T>(k: string) => store.get(k) as T | undefined,
      update: async (k, v) => void (v === undefined ? store.delete(k) : store.set(k, v)),
    };
    assert.equal(profileFor(memo, 'http://a/v1', undefined), H100_7B);
    await rememberProfile(memo, 'http://a/v1', { ...UNIT_PROFILE, name: 'learned http://a/v1' });
    assert.equal(profileFor(memo, 'http://a/v1', undefined).name, 'learned http://a/v1');
    assert.equal(store.has('splitpoint.perfProfiles'), false);
  });
});
