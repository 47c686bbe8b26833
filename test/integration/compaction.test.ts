import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_TOOL_SPECS } from '../../src/core/agent/toolSpecs';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { defaultSettings } from '../../src/core/config/settings';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import type { PlanChoice } from '../../src/core/compaction/events';
import { toWire } from '../../src/core/messages';
import { MemoryStorage } from '../../src/core/session/memoryStorage';
import { SessionStore } from '../../src/core/session/sessionStore';
import { randomIds, systemClock } from '../../src/core/session/storage';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { Semaphore, VllmClient } from '../../src/llm';
import { startSimulator } from '../sim';
import { exited, holdInChild } from '../unit/helpers/sessionLockHolder';
import type { SimHandle } from '../sim';

const root = join(__dirname, '..', '..');

/**
 * Runs the built CLI without blocking this process: the simulator serves from
 * the same event loop, so spawnSync would deadlock it.
 */
function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A port that nothing listens on: bound, read, and released. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
const fixture = join(root, 'test', 'fixtures', 'long-session.json');

/**
 * Block compaction over real HTTP: the openai-based client against the
 * simulator, whose prefix cache and summarizer behave like vLLM's.
 */
describe('block compaction against the simulator', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  let ledger: TokenLedger;

  before(async () => {
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
    ledger = new TokenLedger(await loadTiktokenCounter());
  });
  after(() => sim.close());
  beforeEach(() => {
    sim.resetCache();
    sim.resetStats();
  });

  async function pending(over: Partial<CompactionSettings>, limit = 64) {
    const store = await SessionStore.importArray({ storage: new MemoryStorage() }, '/m.jsonl', JSON.parse(readFileSync(fixture, 'utf8')));
    const client = new VllmClient({ baseURL: sim.url });
    const snap = snapshotSession(store, ledger, { strategy: 'token-fraction' }, AGENT_TOOL_SPECS, {
      contextWindow: 200_000,
      replyReserve: 4096,
    });
    const pc = createCompaction(
      snap,
      { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 200_000, ...over },
      {
        model: client,
        limiter: new Semaphore(limit),
        count: (m) => ledger.estimate(m),
        clock: systemClock,
        ids: randomIds,
      },
    );
    return { pc, store, snap, client };
  }

  it('cache-aligned workers reuse the prefix the earlier ones are computing, all in flight together', async () => {
    // A little latency so that the requests overlap inside the server.
    await sim.close();
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0.02, maxNumSeqs: 64 });
    const { pc } = await pending({ blockTokens: 8192, layout: 'cache-aligned' });
    await pc.start();
    assert.ok(pc.isComplete());
    const blocks = pc.blocks;
    assert.ok(blocks.length >= 10, `${blocks.length} blocks`);
    // Arrival order over HTTP is not block order, so which worker computes a
    // shared prefix varies; what must hold is that it is computed about once.
    const uncached = blocks.reduce((s, b) => s + b.stats!.inputTokens - b.stats!.cachedTokens!, 0);
    const last = blocks.at(-1)!.stats!.inputTokens;
    assert.ok(uncached < 1.3 * last, `uncached ${uncached} vs the longest prompt ${last}: workers shared their prefixes`);
    assert.equal(pc.totals().maxInFlight, blocks.length, 'all workers in flight at once');
    assert.equal(sim.stats.maxRunning, blocks.length, 'and running together in the server');
    await sim.close();
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
  });

  it('with the agent prefix warm, each worker prefills only about its instruction', async () => {
    const { pc, snap, client } = await pending({ blockTokens: 8192, layout: 'cache-aligned' });
    await client.chat({
      messages: snap.context.map(toWire),
      tools: [...AGENT_TOOL_SPECS],
      toolChoice: 'auto',
      maxTokens: 1,
      stream: false,
    });
    await pc.start();
    for (const b of pc.blocks) {
      const st = b.stats!;
      const uncached = st.inputTokens - st.cachedTokens!;
      assert.ok(
        uncached <= st.instructionTokens * 1.3 + 32,
        `block ${b.index}: ${uncached} uncached, instruction ≈${st.instructionTokens}`,
      );
    }
  });

  it('the summary keeps the focus and exact facts from the head, and adoption shrinks the context', async () => {
    const { pc, store, snap } = await pending({ blockTokens: 16384, focus: 'users table migration' });
    await pc.start();
    const summary = pc.summaryText();
    assert.match(summary, /users/i);
    assert.match(summary, /src\/[\w/]+\.ts/, 'exact paths survive');
    const before = ledger.total(snap.context);
    await pc.adopt(store);
    const after = ledger.total(store.active().messages);
    assert.ok(after < before / 2, `${before} → ${after}`);
    assert.equal(store.active().messages.filter((m) => m.kind === 'summary').length, 1);
  });

  it("target-block layout sends the paper's transcript and the simulator summarises only the target", async () => {
    const { pc } = await pending({ blockTokens: 16384, layout: 'target-block' });
    await pc.start();
    assert.ok(pc.isComplete());
    const body = sim.lastChatBody() as { messages: { content: string }[]; tools?: unknown };
    assert.equal(body.tools, undefined);
    assert.match(body.messages.at(-1)!.content, /<TARGET_BLOCK_[0-9a-f]+>/);
  });

  it('a server error fails one block; retrying it alone completes the compaction', async () => {
    const { pc } = await pending({ blockTokens: 16384 }, 1);
    sim.injectFault({
      status: 400,
      body: { object: 'error', message: 'simulated bad request', type: 'BadRequestError', param: null, code: 400 },
    } as never);
    await pc.start();
    const failed = pc.blocks.filter((b) => b.status === 'failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.error!, /simulated bad request/);
    const requestsBefore = sim.stats.requests.length;
    await pc.retryFailed();
    assert.ok(pc.isComplete());
    assert.equal(sim.stats.requests.length, requestsBefore + 1);
  });

  it('a sent worker shows as streaming with 0 tokens while the server has not started it (its queue, the prefill)', async () => {
    const { pc } = await pending({ blockTokens: 16384 });
    const seen: Array<[number, number]> = [];
    const off = pc.on((e) => {
      if (e.type === 'block-streaming') seen.push([e.block, e.outputTokens]);
    });
    sim.pauseScheduler();
    const run = pc.start();
    try {
      const n = pc.blocks.length;
      for (let i = 0; i < 100 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(
        seen.map(([, t]) => t),
        Array<number>(n).fill(0),
        'every worker, sent and not yet answered, is shown as sent',
      );
      assert.ok(
        pc.blocks.every((b) => b.status === 'streaming' && b.streamedTokens === 0),
        pc.blocks.map((b) => b.status).join(' '),
      );
    } finally {
      sim.resumeScheduler();
      await run;
      off();
    }
    assert.ok(pc.isComplete());
  });

  it('cancelling mid-flight closes the connections and adopts nothing', async () => {
    await sim.close();
    sim = await startSimulator({ maxModelLen: 200_000, profile: 'unit', timeScale: 5 }); // 50 ms per step
    const { pc, store } = await pending({ blockTokens: 16384 });
    const run = pc.start();
    await new Promise((r) => setTimeout(r, 300));
    pc.cancel();
    await run;
    await assert.rejects(pc.adopt(store), /cancelled/);
    assert.equal(store.snapshot.compactions.length, 0);
    // The server sees the closes asynchronously and retires a request at its next step (50 ms here): wait, bounded.
    const settled = () => sim.openSockets() === 0 && sim.stats.requests.every((r) => r.status !== 'running');
    for (let i = 0; i < 40 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(sim.openSockets(), 0, 'no leaked sockets');
    assert.deepEqual(
      sim.stats.requests.filter((r) => r.status === 'running').map((r) => r.id),
      [],
      'the server still runs requests the client cancelled',
    );
    await sim.close();
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
  });
});

describe('splitpoint compact (built CLI) against the simulator', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  before(async () => {
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
  });
  after(() => sim.close());

  it('--plan prints the chosen plan and the alternatives with predicted times, and runs nothing', async () => {
    sim.resetStats();
    const r = await cli('compact', '--session', fixture, '--endpoint', sim.url, '--plan', '--json', '--profile', 'h100-7b');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.plan.profile.name, 'h100-7b');
    assert.ok(out.plan.chosen.predictedMs > 0);
    assert.ok(out.plan.alternatives.length >= 3);
    for (const a of out.plan.alternatives.filter((x: { excluded?: string }) => !x.excluded))
      assert.ok(a.predictedMs >= out.plan.chosen.predictedMs);
    assert.equal(sim.stats.requests.filter((q) => q.kind === 'compaction').length, 0, 'no worker was sent');
    const text = await cli(
      'compact',
      '--session',
      fixture,
      '--endpoint',
      sim.url,
      '--plan',
      '--layout',
      'cache-aligned',
      '--profile',
      'h100-7b',
    );
    assert.match(text.stdout, /^plan \(profile h100-7b, named; cold cache; 1 endpoint; fixed: layout=cache-aligned\):\n> cache-aligned/);
  });

  for (const window of [65_536, 4_096])
    it(`plans the split and volume the extension would for the same session in a ${window}-token window`, async () => {
      const r = await cli('compact', '--session', fixture, '--endpoint', sim.url, '--plan', '--json', '--window', String(window));
      assert.equal(r.status, 0, r.stderr);
      const raw = JSON.parse(readFileSync(fixture, 'utf8')) as unknown;
      const store = await SessionStore.importArray({ storage: new MemoryStorage() }, '/m.jsonl', raw);
      const ledger = new TokenLedger(await loadTiktokenCounter());
      // The extension's own settings for that window (agentSettingsFrom): its reply reserve, and where it aims.
      const extension = agentSettingsFrom(defaultSettings(), window);
      const split = { contextWindow: window, replyReserve: extension.replyReserve };
      const snap = snapshotSession(store, ledger, { strategy: 'token-fraction' }, AGENT_TOOL_SPECS, split);
      assert.equal(JSON.parse(r.stdout).summaryTokens, planCompaction(snap, extension.compaction).summaryTokens);
    });

  it("--plan counts other clients' work from the server's /metrics; --ignore-load plans as if it were idle", async () => {
    const busy = await startSimulator({
      maxModelLen: 200_000,
      timeScale: 0,
      script: { replies: [{ match: 'OTHER', content: 'y'.repeat(150_000), repeat: true }] },
    });
    const stop = new AbortController();
    setMaxListeners(20, stop.signal);
    try {
      const client = new VllmClient({ baseURL: busy.url });
      for (let i = 0; i < 12; i++)
        void client
          .chat({ messages: [{ role: 'user', content: `OTHER ${i} ${'w'.repeat(20_000)}` }], stream: true }, { signal: stop.signal })
          .catch(() => undefined);
      while (busy.stats.requests.filter((r) => r.firstToken !== undefined).length < 12) await new Promise((r) => setTimeout(r, 2));
      // Held still while the CLI plans, so that the load it reads is the load there is.
      busy.pauseScheduler();
      const plan = async (...extra: string[]) => {
        const r = await cli('compact', '--session', fixture, '--endpoint', busy.url, '--plan', '--json', '--profile', 'h100-7b', ...extra);
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(r.stdout).plan as PlanChoice;
      };
      const loaded = await plan();
      const idle = await plan('--ignore-load');
      assert.equal(loaded.serverLoad?.[0]?.sequences, 12);
      assert.ok(loaded.serverLoad![0]!.kvTokens > 12 * 4000, JSON.stringify(loaded.serverLoad));
      assert.equal(idle.serverLoad, undefined);
      assert.ok(loaded.chosen.predictedMs! > idle.chosen.predictedMs!, `${loaded.chosen.predictedMs} vs ${idle.chosen.predictedMs} ms`);
      const text = await cli('compact', '--session', fixture, '--endpoint', busy.url, '--plan', '--profile', 'h100-7b');
      assert.match(
        text.stdout,
        /^plan \(profile h100-7b, named; cold cache; 1 endpoint; the server: 12 other requests running, [\d.,]+K? KV tokens\):/,
      );
    } finally {
      stop.abort();
      busy.resumeScheduler();
      await busy.close();
    }
  });

  it('prints the documented JSON and, with --adopt, writes one compaction event to the log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-compact-'));
    const raw = JSON.parse(readFileSync(fixture, 'utf8')) as { role: string; content: string }[];
    const header = JSON.stringify({ type: 'session', v: 1, id: 's1', createdAt: 1 });
    const lines = raw.map((m, i) => JSON.stringify({ type: 'message', message: { ...m, id: `m${i}`, timestamp: i, kind: 'normal' } }));
    const log = join(dir, 's.jsonl');
    writeFileSync(log, [header, ...lines].join('\n') + '\n');
    const r = await cli(
      'compact',
      '--session',
      log,
      '--endpoint',
      sim.url,
      '--block-tokens',
      '8192',
      '--focus',
      'keep the parser decisions',
      '--adopt',
      '--json',
    );
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(Number.isInteger(out.tailStartIndex));
    assert.equal(raw[out.tailStartIndex]!.role, 'user');
    assert.ok(out.blocks.length > 1);
    for (const b of out.blocks)
      for (const k of ['index', 'firstMessage', 'lastMessage', 'inputTokens', 'outputTokens', 'ms', 'cachedTokens']) assert.ok(k in b, k);
    assert.equal(out.outcome.predictedMs, out.plan.chosen.predictedMs, 'after the run: predicted against measured');
    assert.equal(out.outcome.measuredMs, out.wallMs);
    assert.ok(out.tokensAfter < out.tokensBefore);
    assert.match(out.summary, /Focus requested: keep the parser decisions/);
    const after = readFileSync(log, 'utf8').trimEnd().split('\n');
    assert.equal(after.length, lines.length + 2);
    assert.equal(JSON.parse(after.at(-1)!).type, 'compaction');
  });

  it('with --adopt refuses a session another process has open for writing, and leaves it byte for byte; without, reads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-compact-locked-'));
    const log = join(dir, 's.jsonl');
    const imported = await cli('import', fixture, '--out', log);
    assert.equal(imported.status, 0, imported.stderr);
    const before = readFileSync(log, 'utf8');
    const editor = await holdInChild(log);
    try {
      const adopt = await cli('compact', '--session', log, '--endpoint', sim.url, '--block-tokens', '8192', '--adopt', '--json');
      assert.equal(adopt.status, 1);
      assert.match(adopt.stderr, new RegExp(`open for writing in VS Code \\(process ${editor.pid},.*delete ${log}\\.lock`));
      const readOnly = await cli('compact', '--session', log, '--endpoint', sim.url, '--block-tokens', '8192', '--json');
      assert.equal(readOnly.status, 0, readOnly.stderr);
      assert.equal(JSON.parse(readOnly.stdout).adopted, false);
      assert.equal(readFileSync(log, 'utf8'), before);
    } finally {
      editor.kill('SIGKILL');
      await exited(editor);
    }
  });

  it('names the models the server serves when --model names one it does not', async () => {
    const r = await cli('compact', '--session', fixture, '--endpoint', sim.url, '--model', 'no-such-model', '--plan');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`does not serve the model "no-such-model"; it serves: ${sim.model}\\. Pass one of those with --model`),
    );
  });

  it('names the URL and how to start vLLM when nothing listens there', async () => {
    const closed = await freePort();
    const r = await cli('compact', '--session', fixture, '--endpoint', `http://127.0.0.1:${closed}/v1`);
    assert.equal(r.status, 1);
    assert.ok(r.stderr.includes(`http://127.0.0.1:${closed}/v1`), r.stderr);
    assert.match(r.stderr, /vllm serve/);
  });
});
