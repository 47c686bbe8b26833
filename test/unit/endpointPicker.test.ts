import assert from 'node:assert/strict';
import { EndpointPicker, FAILED_ENDPOINT_PAUSE_MS } from '../../src/core/compaction/endpointPicker';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import type { ModelPort, ToolSpec } from '../../src/core/ports';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

describe('compaction endpoints: one that fails is passed over', () => {
  it("picks the least loaded endpoint that has not failed lately, and the agent's own when all others have", () => {
    const clock = fixedClock();
    const p = new EndpointPicker(3, false, clock);
    assert.deepEqual([p.pick(), p.pick(), p.pick()], [0, 1, 2]);
    p.ended(1, true);
    assert.notEqual(p.pick(), 1, 'endpoint 1 failed: even idle, it is passed over');
    p.ended(2, true);
    p.ended(0, false);
    p.ended(0, false);
    assert.equal(p.pick(), 0, "every other endpoint failed: the agent's own");
    clock.advance(FAILED_ENDPOINT_PAUSE_MS);
    assert.equal(p.pick(), 1, 'after the pause a failed endpoint is tried again');
    p.ended(1, false);
    assert.equal(p.pick(), 1, 'and once it answers it is an endpoint like any');
    const aligned = new EndpointPicker(3, true, clock);
    assert.deepEqual([aligned.pick(), aligned.pick()], [0, 0], "cache-aligned workers stay where the agent's prefix is cached");
  });

  it('a compaction with a replica that is down finishes on the endpoints that answer', async () => {
    const counter = new CharEstimateCounter();
    const tools: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 12; t++) {
      await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
      const call = { id: `c${t}`, type: 'function' as const, function: { name: 'read_file', arguments: `{"path":"src/mod${t}.ts"}` } };
      await store.append({ role: 'assistant', content: null, tool_calls: [call] });
      await store.append({ role: 'tool', tool_call_id: `c${t}`, content: `// src/mod${t}.ts\n${'x'.repeat(6000)}` });
      await store.append({ role: 'assistant', content: `Patched parseHeader in src/mod${t}.ts.` });
    }
    const window = { contextWindow: 200_000, replyReserve: 4096 };
    const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, tools, window);
    const up = new FakeModel();
    // Connection refused, as the client reports it after its own retries: fast, every time.
    let downRequests = 0;
    const down: ModelPort = {
      chat: async () => {
        downRequests++;
        await new Promise((r) => setTimeout(r, 2));
        throw new Error('connect ECONNREFUSED 10.0.0.2:8000');
      },
    };
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 200_000, profile: UNIT_PROFILE, layout: 'target-block' as const };
    const deps = { model: up, limiter: unlimited, count: (m: Parameters<typeof counter.countMessage>[0]) => counter.countMessage(m) };
    const pc = createCompaction(snap, settings, {
      ...deps,
      clock: fixedClock(),
      ids: counterIds(),
      replicas: [{ model: down, limiter: unlimited }],
    });
    assert.equal(pc.plan.choice?.replicas, 2);
    await pc.start();
    await pc.retryFailed();
    assert.ok(pc.isComplete(), `blocks: ${pc.blocks.map((b) => b.status).join(', ')}`);
    assert.ok(downRequests < pc.blocks.length, `the dead replica got ${downRequests} of ${pc.blocks.length} blocks' requests`);
  });
});
