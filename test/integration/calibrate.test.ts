import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibrate } from '../../src/cli/calibrate';
import { learnedProfile, resolveProfile, saveLearnedProfile } from '../../src/cli/profileStore';
import { H100_7B, UNIT_PROFILE } from '../../src/core/perf/profile';
import { VllmClient } from '../../src/llm';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

describe('calibration against the simulator', () => {
  let sim: SimHandle;
  afterEach(() => sim?.close());

  it("recovers the h100-7b step coefficients from the server's own histograms", async () => {
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 0, maxModelLen: 131_072 });
    // The scheduler limits come from the base (the client cannot measure them): the server's, here.
    const base = { ...UNIT_PROFILE, maxNumSeqs: 256, maxNumBatchedTokens: 8192 };
    const r = await calibrate({ client: new VllmClient({ baseURL: sim.url }), contextWindow: 131_072, base, name: 'test' });
    assert.equal(r.timing, 'server metrics');
    const got = r.profile.step;
    const want = H100_7B.step;
    const near = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) <= tol * b, `${what}: ${a} vs ${b}`);
    near(got.prefillMsPerToken, want.prefillMsPerToken, 0.05, 'per prefill token');
    near(got.attentionMsPerPair, want.attentionMsPerPair, 0.05, 'attention');
    near(got.minStepMs, want.minStepMs, 0.05, 'decode floor');
    near(got.decodeKvMsPerKToken, want.decodeKvMsPerKToken, 0.1, 'decode KV');
    // Limits the client cannot measure stay as in the base profile.
    assert.equal(r.profile.maxNumBatchedTokens, 8192);
    assert.equal(r.profile.kvCapacityTokens, UNIT_PROFILE.kvCapacityTokens);
  });

  it("reads a v0.10 server's metric names, and says so when a server times only the first token", async () => {
    const base = { ...UNIT_PROFILE, maxNumSeqs: 256, maxNumBatchedTokens: 8192 };
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 0, maxModelLen: 131_072, metricNames: 'v0.10' });
    const old = await calibrate({ client: new VllmClient({ baseURL: sim.url }), contextWindow: 131_072, base, name: 'test' });
    assert.equal(old.timing, 'server metrics');
    const near = (a: number, b: number) => Math.abs(a - b) <= 0.1 * b;
    assert.ok(
      near(old.profile.step.decodeKvMsPerKToken, H100_7B.step.decodeKvMsPerKToken),
      `decode KV ${old.profile.step.decodeKvMsPerKToken}`,
    );
    await sim.close();
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 0, maxModelLen: 131_072, metricNames: 'no-decode' });
    const mixed = await calibrate({ client: new VllmClient({ baseURL: sim.url }), contextWindow: 131_072, base, name: 'test' });
    assert.equal(mixed.timing, 'server metrics for prefill, client clock for decode');
    assert.match(mixed.profile.source, /server metrics for prefill, client clock for decode/);
  });

  it("stores the profile per endpoint and the planner's resolver finds it", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'sp-prof-')), 'profiles.json');
    assert.equal(resolveProfile(undefined, 'http://gpu:8000/v1', path).from, 'default');
    saveLearnedProfile('http://gpu:8000/v1/', { ...UNIT_PROFILE, name: 'mine' }, path);
    assert.equal(learnedProfile('http://gpu:8000/v1', path)!.name, 'mine');
    const r = resolveProfile(undefined, 'http://gpu:8000/v1', path);
    assert.deepEqual([r.from, r.profile.name], ['learned', 'mine']);
    assert.equal(resolveProfile('h100-7b', 'http://gpu:8000/v1', path).profile, H100_7B);
    assert.throws(() => resolveProfile('nope', 'http://gpu:8000/v1', path), /not a named profile \(h100-7b, unit\) nor a file/);
  });
});
