/**
 * The compaction planner's inputs as the extension passes them: the profile
 * setting (name or file, else learned for the endpoint, else h100-7b), the
 * compaction endpoints (replicas, with the compactor's key), and the bound on
 * how much a background compaction may slow the agent.
 */
import type { ControllerEnvironment } from '../../src/host/controllerEnvironment';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackgroundCompaction } from '../../src/core/agent/compactionRunner';
import { defaultSettings } from '../../src/core/config/settings';
import type { SplitpointSettings } from '../../src/core/config/settings';
import type { WorkerEndpoint } from '../../src/core/compaction/workerRun';
import { workerPaceMs } from '../../src/core/compaction/workerPace';
import { H100_7B, UNIT_PROFILE } from '../../src/core/perf/profile';
import type { PerfProfile } from '../../src/core/perf/profile';
import type { MementoLike } from '../../src/core/perf/profileMemo';
import { profileFor } from '../../src/core/perf/profileMemo';
import { unlimited } from '../../src/core/ports';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import { ProfileRefresher, resolveHostProfile } from '../../src/host/compactionProfile';
import { MemoryLog } from '../../src/host/log';
import { buildEndpoints } from '../../src/host/modelPorts';
import { SessionController } from '../../src/host/sessionController';
import type { HostToWebview } from '../../src/protocol/messages';
import { startSimulator } from '../sim';
import { backgroundDeps, history } from './helpers/backgroundDeps';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock } from './helpers/memoryStorage';

class Memo implements MementoLike {
  readonly data = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.data.set(key, value);
  }
}

const ENDPOINT = 'http://gpu:8000/v1';

function profileDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sp-profile-'));
  writeFileSync(join(dir, 'mine.json'), JSON.stringify({ ...UNIT_PROFILE, name: 'mine', source: 'bench --calibrate' }));
  writeFileSync(join(dir, 'broken.json'), JSON.stringify({ name: 'broken', step: { minStepMs: 'fast' } }));
  return dir;
}

/** A controller on fake models, with the planner inputs the host would pass. */
async function controller(
  settings: SplitpointSettings,
  extra: { profile?: () => PerfProfile; replicas?: WorkerEndpoint[]; serverLoad?: ControllerEnvironment['serverLoad'] },
  wantsDeltas?: () => boolean,
  sends: string[] | 'close-while-reading' = ['/compact'],
) {
  const store = await history(8);
  const posted: HostToWebview[] = [];
  const compactor = new FakeModel();
  const c = new SessionController({
    store,
    ledger: new TokenLedger(new CharEstimateCounter()),
    env: { settings, contextWindow: 32_768, agent: new FakeModel(), compactor, compactorLimiter: unlimited, judge: compactor, ...extra },
    ...controllerDefaults(store, { id: 'w', title: 'W' }),
    clock: fixedClock(),
    ids: counterIds(),
    post: (m) => posted.push(m),
    ...(wantsDeltas ? { wantsDeltas } : {}),
  });
  if (sends === 'close-while-reading') {
    // The session closes while a /compact waits for the server's load.
    const sent = c.handle({ type: 'send', text: '/compact' });
    await c.dispose();
    await sent;
  } else for (const text of sends) await c.handle({ type: 'send', text });
  const views = posted
    .filter((m): m is Extract<HostToWebview, { type: 'compaction' }> => m.type === 'compaction')
    .map((m) => m.compaction!);
  const ready = views[views.length - 1]!;
  await c.dispose();
  return { ready, compactor };
}

const settingsWith = (o: Partial<SplitpointSettings>): SplitpointSettings => ({
  ...defaultSettings(),
  judge: { enabled: false, threshold: 7 },
  ...o,
});

describe('host compaction wiring', () => {
  const dir = profileDir();

  it("a /compact's workers ask the view whether anyone watches before each read of their streams", async () => {
    const s = settingsWith({ mode: 'parallel', blockTokens: 256 });
    let asked = 0;
    const { compactor } = await controller(s, {}, () => (asked++, false));
    const paces = compactor.requests.map((r) => r.deltaBatchMs);
    assert.ok(paces.length >= 2, `${paces.length} worker request(s)`);
    for (const p of paces) {
      assert.equal(typeof p, 'function');
      const before = asked;
      assert.equal((p as () => number)(), workerPaceMs(0, false));
      assert.equal(asked, before + 1, "the interval follows the host's wantsDeltas");
    }
  });

  it('resolves the profile setting: a name, a file relative to the workspace, else learned, else h100-7b', async () => {
    const memo = new Memo();
    const named = resolveHostProfile('unit', ENDPOINT, memo, dir);
    assert.deepEqual([named.from, named.profile.name, named.problem], ['named', 'unit', undefined]);
    const file = resolveHostProfile('mine.json', ENDPOINT, memo, dir);
    assert.deepEqual([file.from, file.profile.name, file.problem], ['file', 'mine', undefined]);
    assert.deepEqual(resolveHostProfile(undefined, ENDPOINT, memo).from, 'default');
    assert.equal(resolveHostProfile('', ENDPOINT, memo).profile, H100_7B);

    // The agent's own timings, fed through the refresher, become the endpoint's learned profile.
    const refresher = new ProfileRefresher(memo, ENDPOINT, (m) => assert.fail(m), 3);
    for (const n of [1000, 4000, 9000]) refresher.addPrefill({ newTokens: n, cachedTokens: 0, ttftMs: 5 + n * 0.05 });
    await new Promise((r) => setImmediate(r));
    const learned = resolveHostProfile(undefined, `${ENDPOINT}/`, memo);
    assert.equal(learned.from, 'learned');
    assert.match(learned.profile.name, /^learned /);
    assert.ok(Math.abs(learned.profile.step.prefillMsPerToken - 0.05) < 0.01, `fitted ${learned.profile.step.prefillMsPerToken} ms/token`);
    assert.equal(profileFor(memo, ENDPOINT, undefined).name, learned.profile.name, 'stored through profileMemo');
  });

  it('an invalid profile file names the setting and the fault, and falls back to the default', () => {
    for (const spec of ['broken.json', 'missing.json']) {
      const r = resolveHostProfile(spec, ENDPOINT, new Memo(), dir);
      assert.equal(r.profile, H100_7B);
      assert.equal(r.from, 'default');
      assert.match(r.problem ?? '', /splitpoint\.compaction\.profile "/);
      assert.ok(r.problem!.includes(join(dir, spec)), r.problem);
      assert.match(r.problem!, /Using h100-7b instead; fix the file .* or clear the setting/);
    }
    assert.match(resolveHostProfile('broken.json', ENDPOINT, new Memo(), dir).problem!, /step\.minStepMs/);
  });

  it('a /compact made through the controller is planned with the configured profile, and h100-7b after a bad file', async () => {
    const memo = new Memo();
    const s = settingsWith({ perfProfile: 'mine.json' });
    const good = await controller(s, { profile: () => resolveHostProfile(s.perfProfile, ENDPOINT, memo, dir).profile });
    assert.equal(good.ready.plan?.profile, 'mine (bench --calibrate)');
    const bad = await controller(s, { profile: () => resolveHostProfile('broken.json', ENDPOINT, memo, dir).profile });
    assert.equal(bad.ready.plan?.profile, `h100-7b (${H100_7B.source})`);
  });

  it('replicas from the settings reach the compaction deps: target-block workers run on them too', async () => {
    const replica = new FakeModel();
    const s = settingsWith({ layout: 'target-block', blockTokens: 256 });
    const { ready, compactor } = await controller(s, { replicas: [{ model: replica, limiter: unlimited }] });
    assert.equal(ready.state, 'ready');
    assert.ok(ready.blocks.length >= 2, `${ready.blocks.length} blocks`);
    assert.ok(
      replica.requests.length > 0 && compactor.requests.length > 0,
      `compactor ${compactor.requests.length}, replica ${replica.requests.length}`,
    );
    assert.equal(replica.requests.length + compactor.requests.length, ready.blocks.length);
  });

  it('buildEndpoints makes a client per compaction endpoint, with the compactor key, skipping the compactor itself', async () => {
    const sim = await startSimulator({ apiKey: 'k-compact', timeScale: 0 });
    try {
      const s = settingsWith({ endpoint: 'http://127.0.0.1:9/v1', compactionEndpoints: [sim.url, 'http://127.0.0.1:9/v1/'] });
      const e = buildEndpoints(s, { agent: 'k-compact' }, new MemoryLog(), () => undefined);
      assert.deepEqual(
        e.replicas.map((r) => r.baseURL),
        [sim.url],
      );
      const req = { messages: [{ role: 'user' as const, content: 'hello' }], maxTokens: 4 };
      const r = await e.replicas[0]!.model.chat(req);
      assert.ok(r.usage && r.usage.promptTokens > 0, 'the replica answered with the key');
      const wrong = buildEndpoints(s, { agent: 'nope' }, new MemoryLog(), () => undefined);
      await assert.rejects(wrong.replicas[0]!.model.chat(req), /401|auth|key/i);
    } finally {
      await sim.close();
    }
  });

  it("the agent's streamed requests are timed into the learning sink", async () => {
    const sim = await startSimulator({ timeScale: 0 });
    try {
      const prefill: number[] = [];
      const sink = { addPrefill: (o: { newTokens: number }) => prefill.push(o.newTokens), addDecode: () => undefined };
      const e = buildEndpoints(settingsWith({ endpoint: sim.url }), undefined, new MemoryLog(), () => undefined, sink);
      const deltas: string[] = [];
      await e.agent.chat({ messages: [{ role: 'user', content: 'hello there' }], maxTokens: 16 }, { onDelta: (d) => deltas.push(d.type) });
      assert.ok(deltas.length > 0, 'the caller still gets its deltas');
      assert.equal(prefill.length, 1);
      assert.ok(prefill[0]! > 0, `${prefill[0]} uncached prompt tokens`);
      // With other clients' requests last seen on the server, its timings are not the agent's alone: not learned.
      const shared = buildEndpoints(
        settingsWith({ endpoint: sim.url }),
        undefined,
        new MemoryLog(),
        () => undefined,
        sink,
        undefined,
        () => 3,
      );
      await shared.agent.chat({ messages: [{ role: 'user', content: 'hello again' }], maxTokens: 16 }, { onDelta: () => undefined });
      assert.equal(prefill.length, 1);
    } finally {
      await sim.close();
    }
  });

  it('maxAgentSlowdown reaches background compactions, and only them', async () => {
    const store = await history(8);
    const settings = agentSettingsFrom(settingsWith({ maxAgentSlowdown: 1.2, blockTokens: 256 }), 32_768);
    const bg = new BackgroundCompaction(backgroundDeps(store), settings, [], undefined, true);
    bg.cancel();
    await bg.done;
    assert.deepEqual(bg.pending.plan.settings.background, { maxSlowdown: 1.2 });
    assert.equal(bg.pending.plan.choice?.background, true);
    const chosen = bg.pending.plan.choice!.chosen;
    assert.ok(
      chosen.agentSlowdown === undefined || chosen.agentSlowdown <= 1.2 || chosen.excluded,
      `chosen slows ×${chosen.agentSlowdown}`,
    );
    assert.equal(settings.compaction.background, undefined, "the user's own /compact is not bounded");
    // The agent waits for this one (block, reactive, fallback) or is idle: nothing decodes beside it to bound.
    const waited = new BackgroundCompaction(backgroundDeps(store), settings, [], undefined, false);
    waited.cancel();
    assert.equal(waited.pending.plan.settings.background, undefined, 'a compaction the agent waits for is not bounded');
    assert.equal(waited.pending.plan.settings.cache, 'warm', "the agent's prefix is in its server's cache");
    // The compactor is another server: the agent neither shares its batch nor its cache.
    const apart = new BackgroundCompaction({ ...backgroundDeps(store), compactorOnAgentServer: false }, settings, [], undefined, true);
    apart.cancel();
    assert.equal(apart.pending.plan.settings.background, undefined, 'a compactor on another server does not slow the agent');
    assert.equal(apart.pending.plan.settings.cache, 'cold', "another server has none of the agent's prefix");
  });

  it("a /compact awaits a fresh reading of the servers' load and plans around it; the loop's compactions take the latest", async () => {
    const s = settingsWith({ mode: 'parallel', blockTokens: 256 });
    const load = { sequences: 3, kvTokens: 40_000 };
    let reads = 0;
    let latest = 0;
    const serverLoad = { latest: () => (latest++, [load]), read: async () => (reads++, [load]) };
    const { ready } = await controller(s, { serverLoad });
    assert.deepEqual([reads, latest], [1, 0]);
    assert.equal(ready.plan?.serverLoad, 'the server: 3 other requests running, 40.0K KV tokens');
    // A /compact that replaces our own preview plans on the latest reading: a fresh one would still count the
    // cancelled workers, which the server drops only a step or more later.
    await controller(s, { serverLoad }, undefined, ['/compact', '/compact']);
    assert.deepEqual([reads, latest], [2, 1]);
    // Closed while the reading was awaited: no compaction starts that nobody could see or cancel.
    let answer: (l: (typeof load)[]) => void = () => undefined;
    const slow = { latest: () => [load], read: () => new Promise<(typeof load)[]>((r) => (answer = r)) };
    const closed = controller(s, { serverLoad: slow }, undefined, 'close-while-reading');
    await new Promise((r) => setTimeout(r, 20));
    answer([load]);
    assert.equal((await closed).compactor.requests.length, 0);
    const idle = await controller(s, { serverLoad: { latest: () => undefined, read: async () => [{ sequences: 0, kvTokens: 0 }] } });
    assert.equal(idle.ready.plan?.serverLoad, undefined);
    // The agent loop's background compaction plans on the latest reading, without waiting for one.
    const deps = backgroundDeps(await history(8), { judge: new FakeModel(), serverLoad: () => [load] });
    const bg = new BackgroundCompaction(deps, agentSettingsFrom(s, 32_768), [], undefined, true);
    bg.cancel();
    await bg.done;
    assert.deepEqual(bg.pending.plan.choice?.serverLoad, [load]);
  });
});
