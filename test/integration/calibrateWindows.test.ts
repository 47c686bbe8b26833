/**
 * `splitpoint bench --calibrate` (the built CLI, in its own process) against the simulator over HTTP: windows of
 * 8K to 32K tokens, and the client-clock path through a proxy that hides /metrics. Rebuild dist/cli.js after
 * changing src/cli (node esbuild.mjs).
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeResidualWarning, promptSizes } from '../../src/cli/calibrate';
import { H100_7B } from '../../src/core/perf/profile';
import type { PerfProfile } from '../../src/core/perf/profile';
import { readProfileFile } from '../../src/node/profileFile';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');

function runCli(args: string[], profiles: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, SPLITPOINT_PROFILES: profiles };
    execFile(process.execPath, [cli, ...args], { env, maxBuffer: 1 << 26 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A server without /metrics, as vLLM behind a gateway that forwards only the API: everything else passes through. */
async function hideMetrics(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/metrics')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"detail":"Not Found"}');
      return;
    }
    const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const near = (got: number, want: number, tol: number, what: string) =>
  assert.ok(Math.abs(got - want) <= tol * want, `${what}: ${got} vs ${want} (±${100 * tol} %)`);

interface CalibrateJson {
  profile: PerfProfile;
  timing: string;
  plan: { prefillTokens: number[]; decodeKvTokens: number[]; decodeOutputTokens: number; promptCapTokens: number };
  warnings: string[];
}

describe('bench --calibrate on small windows and without /metrics (built CLI)', function () {
  this.timeout(120_000);
  let sim: SimHandle | undefined;
  let proxy: { url: string; close: () => Promise<void> } | undefined;
  afterEach(async () => {
    await proxy?.close();
    await sim?.close();
    proxy = sim = undefined;
  });

  for (const window of [8192, 16_384, 32_768]) {
    it(`calibrates a ${window}-token window from the server's histograms, and says which prompt sizes it used`, async () => {
      sim = await startSimulator({ profile: 'h100-7b', timeScale: 0, maxModelLen: window });
      const dir = mkdtempSync(join(tmpdir(), 'sp-calw-'));
      const out = join(dir, 'mine.json');
      const r = await runCli(['bench', '--calibrate', '--endpoint', sim.url, '--out', out], join(dir, 'profiles.json'));
      assert.equal(r.code, 0, r.stderr);
      const p = readProfileFile(out);
      const stored = JSON.parse(readFileSync(join(dir, 'profiles.json'), 'utf8')) as unknown;
      assert.ok(JSON.stringify(stored).includes(p.source), 'the profile is stored for the endpoint too');
      // The simulator's histograms are exact: the fit recovers its profile as closely as on a 128K window.
      near(p.step.prefillMsPerToken, H100_7B.step.prefillMsPerToken, 0.05, 'per prefill token');
      near(p.step.attentionMsPerPair, H100_7B.step.attentionMsPerPair, 0.05, 'attention');
      near(p.step.minStepMs, H100_7B.step.minStepMs, 0.05, 'decode floor');
      near(p.step.decodeKvMsPerKToken, H100_7B.step.decodeKvMsPerKToken, 0.1, 'decode KV');
      const m = /prompts of ([\d, ]+) tokens \(window (\d+)\); decode at ([\d, ]+) KV tokens, (\d+) output tokens/.exec(r.stderr);
      assert.ok(m, r.stderr);
      const sizes = m[1]!.split(', ').map(Number);
      assert.equal(Number(m[2]), window);
      assert.ok(sizes.length >= 3, `${sizes.length} prompt sizes`);
      // The largest prompt and a decode's output fit the window, and the largest uses most of it.
      const top = Math.max(...sizes);
      assert.ok(top + Number(m[4]) <= window, `${top} + ${m[4]} over ${window}`);
      assert.ok(top >= 0.8 * Math.min(window, 32_768) - 1024, `largest prompt ${top} of ${window}`);
    });
  }

  it('times decode by the client clock over long replies when the server has no /metrics', async () => {
    // A reply longer than the 1,024 tokens asked: the simulator ignores ignore_eos, a script makes it run long instead.
    const script = [{ content: Array.from({ length: 1500 }, (_, i) => `word${i}`).join(' '), repeat: true }];
    const timeScale = 0.25;
    sim = await startSimulator({ profile: 'h100-7b', timeScale, maxModelLen: 131_072, script });
    proxy = await hideMetrics(sim.origin);
    const dir = mkdtempSync(join(tmpdir(), 'sp-calw-'));
    const r = await runCli(['bench', '--calibrate', '--endpoint', proxy.url, '--json'], join(dir, 'profiles.json'));
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as CalibrateJson;
    assert.equal(j.timing, 'client clock');
    // Client times are real ms: the simulator's ms times the time scale. Decode is timed over 1,024 tokens at four KV
    // sizes up to 33K, a few ms of clock error against ~0.15 ms per token of KV effect across them.
    near(j.profile.step.minStepMs, H100_7B.step.minStepMs * timeScale, 0.05, 'decode floor');
    near(j.profile.step.decodeKvMsPerKToken, H100_7B.step.decodeKvMsPerKToken * timeScale, 0.3, 'decode KV');
    assert.equal(j.plan.decodeOutputTokens, 1024);
    assert.ok(j.plan.decodeKvTokens.length >= 3, `decode at ${j.plan.decodeKvTokens.join(', ')}`);
    assert.deepEqual(j.warnings, []);
    const body = sim.lastChatBody()!;
    assert.deepEqual([body.ignore_eos, body.min_tokens, body.max_tokens], [true, 1024, 1024]);
  });

  it('says the decode fit is unreliable when replies stop before the output asked for', async () => {
    // The simulator's own replies are a few dozen tokens, as a model that stops at its end-of-sequence token.
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 0.1, maxModelLen: 131_072 });
    proxy = await hideMetrics(sim.origin);
    const dir = mkdtempSync(join(tmpdir(), 'sp-calw-'));
    const r = await runCli(['bench', '--calibrate', '--endpoint', proxy.url, '--json'], join(dir, 'profiles.json'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /calibrate: warning: .*decode replies stopped early \(\d+ of 1024 tokens asked.*the decode fit is unreliable/);
    const j = JSON.parse(r.stdout) as CalibrateJson;
    assert.match(j.profile.source, /decode fit unreliable/);
  });
});

describe('calibration prompt sizes and decode residual', () => {
  it('fits three or more prompt sizes and a decode reply in windows from 4K up, none over the cap', () => {
    for (const window of [4096, 8192, 16_384, 32_768, 65_536, 131_072]) {
      for (const out of [128, Math.min(1024, window / 8)]) {
        const { cap, sizes } = promptSizes(window, out);
        assert.ok(sizes.length >= 3, `${window}: ${sizes.join(', ')}`);
        assert.ok(Math.max(...sizes) === Math.min(32_768, cap) && cap + out <= window, `${window}: cap ${cap}`);
      }
    }
    assert.ok(promptSizes(2048, 256).sizes.length < 3, 'a 2K window is too small');
    assert.deepEqual(promptSizes(8192, 1024, [64, 512, 7000, 6000]).sizes, [64, 512, 6000]);
  });

  it('warns when the decode fit scatters more than the KV moves it', () => {
    const step = { ...H100_7B.step };
    const at = (kv: number, noise: number) => ({ kvTokens: kv, tpotMs: step.minStepMs + (step.decodeKvMsPerKToken * kv) / 1000 + noise });
    assert.equal(decodeResidualWarning(step, [at(100, 0.001), at(10_000, -0.002), at(30_000, 0.001)]), undefined);
    assert.match(decodeResidualWarning(step, [at(100, 0.3), at(10_000, -0.4), at(30_000, 0.2)]) ?? '', /residual .* uncertain/);
  });
});
