/**
 * Reading other clients' work on the compaction servers for the planner, over real HTTP against the simulator: the
 * monitor the extension host keeps (src/host/serverLoadMonitor.ts) and what the controller plans with.
 */
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { H100_7B } from '../../src/core/perf/profile';
import { VllmClient } from '../../src/llm';
import { ServerLoadMonitor } from '../../src/host/serverLoadMonitor';
import { resetPrefixCache } from '../../src/cli/serverProbe';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

/**
 * A simulator with `n` other clients' long replies decoding, held still so that its load stays what it is; with
 * `seats`, the rest wait for one.
 */
async function busySimulator(n: number, seats?: number): Promise<{ sim: SimHandle; stop: () => Promise<void> }> {
  const sim = await startSimulator({
    maxModelLen: 200_000,
    timeScale: 0,
    script: { replies: [{ match: 'OTHER', content: 'y'.repeat(150_000), repeat: true }] },
    ...(seats ? { maxNumSeqs: seats } : {}),
  });
  const abort = new AbortController();
  setMaxListeners(n + 1, abort.signal);
  const client = new VllmClient({ baseURL: sim.url });
  for (let i = 0; i < n; i++)
    void client
      .chat({ messages: [{ role: 'user', content: `OTHER ${i} ${'w'.repeat(8000)}` }], stream: true }, { signal: abort.signal })
      .catch(() => undefined);
  const running = Math.min(n, seats ?? n);
  while (sim.stats.requests.filter((r) => r.firstToken !== undefined).length < running || sim.stats.queued < n - running)
    await new Promise((r) => setTimeout(r, 2));
  sim.pauseScheduler();
  return {
    sim,
    stop: async () => {
      abort.abort();
      sim.resumeScheduler();
      await sim.close();
    },
  };
}

describe('server load for the planner', function () {
  this.timeout(30_000);

  it("reads each endpoint's running requests and KV; keeps the reading; re-reads at most every 15 s, never while compacting", async () => {
    const busy = await busySimulator(5);
    let now = 1_000_000;
    let compacting = false;
    let asked = 0;
    const counting: typeof fetch = (input, init) => (asked++, fetch(input, init));
    try {
      const m = new ServerLoadMonitor(
        () => [busy.sim.origin],
        () => H100_7B.kvCapacityTokens,
        () => compacting,
        () => counting,
        () => now,
      );
      assert.equal(m.latest(), undefined);
      const [load] = await m.read();
      assert.equal(load?.sequences, 5);
      assert.ok(load.kvTokens >= 5 * 2000, `${load.kvTokens} KV tokens`);
      assert.deepEqual(m.latest(), [load]);
      // The agent's requests start readings in the background, throttled.
      const agent = m.watching({ chat: async () => ({ message: { role: 'assistant', content: 'ok' } }) as never });
      await agent.chat({ messages: [] });
      assert.equal(asked, 1, 'a reading younger than 15 s is kept');
      now += 16_000;
      compacting = true;
      await agent.chat({ messages: [] });
      assert.equal(asked, 1, "not while this extension's own workers run: they would count as someone else's");
      compacting = false;
      await agent.chat({ messages: [] });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(asked, 2);
      // A minute later the reading is too old to plan on.
      now += 61_000;
      assert.equal(m.latest(), undefined);
    } finally {
      await busy.stop();
    }
  });

  it('requests waiting for a seat are read apart from the running ones (vllm:num_requests_waiting)', async () => {
    const busy = await busySimulator(6, 4);
    try {
      const m = new ServerLoadMonitor(
        () => [busy.sim.origin],
        () => H100_7B.kvCapacityTokens,
        () => false,
        () => fetch,
      );
      const [load] = await m.read();
      assert.deepEqual([load?.sequences, load?.waiting], [4, 2]);
      assert.ok(load!.kvTokens >= 4 * 2000, `${load!.kvTokens} KV tokens`);
    } finally {
      await busy.stop();
    }
  });

  it("bench's prefix-cache reset is not taken as done while another client's request holds blocks", async () => {
    const busy = await busySimulator(1);
    try {
      const before = busy.sim.cache.stats().cachedBlocks;
      assert.ok(before > 0);
      assert.equal(await resetPrefixCache(busy.sim.origin), false);
      // Asked anyway, as vLLM does, the server keeps its cache and still answers 200.
      const res = await fetch(`${busy.sim.origin}/reset_prefix_cache`, { method: 'POST' });
      assert.equal(res.status, 200);
      assert.equal(busy.sim.cache.stats().cachedBlocks, before);
    } finally {
      await busy.stop();
    }
    const idle = await startSimulator({ timeScale: 0 });
    try {
      assert.equal(await resetPrefixCache(idle.origin), true);
    } finally {
      await idle.close();
    }
  });

  it('a server without /metrics is asked once; one that does not answer in time plans without a load', async () => {
    let hits = 0;
    const bare = createServer((req, res) => {
      hits++;
      if (req.url === '/metrics') res.writeHead(404).end('Not Found');
      else res.writeHead(200).end('{}');
    });
    const silent = createServer(() => undefined);
    await Promise.all([bare, silent].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    const url = (s: typeof bare) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    try {
      let roots = [url(bare), url(silent)];
      const m = new ServerLoadMonitor(
        () => roots,
        () => 1000,
        () => false,
        () => fetch,
      );
      const t0 = performance.now();
      assert.deepEqual(await m.read(), [undefined, undefined]);
      assert.ok(performance.now() - t0 < 3000, 'a silent server costs at most the timeout');
      await m.read();
      assert.equal(hits, 1, 'the 404 is remembered');
      // Other endpoints (a settings change): what was known of the old ones is forgotten.
      roots = [url(bare)];
      assert.equal(m.latest(), undefined, 'a reading of other endpoints is not planned on');
      await m.read();
      assert.equal(hits, 2);
    } finally {
      silent.closeAllConnections();
      await Promise.all([bare, silent].map((s) => new Promise((r) => s.close(r))));
    }
  });
});
