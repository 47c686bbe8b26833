/**
 * `splitpoint eval` end to end: the CLI's own code, the real openai client
 * over HTTP, the simulator's summariser, probes and embeddings.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main';
import type { EvalResult, RunResult } from '../../src/core/fidelity/evaluate';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t + '\n'), err: (t) => (err += t + '\n') });
  return { code, out, err };
}

const rates = (runs: readonly RunResult[]) => runs.map((r) => r.survival.rate);

describe('splitpoint eval against the simulator', function () {
  this.timeout(120_000);
  let sim: SimHandle;
  before(async () => {
    sim = await startSimulator({ maxModelLen: 131_072, timeScale: 0 });
  });
  after(() => sim.close());

  it('on a generated session: 100 % reach and pins, survival rising with volume, probes and stability, JSON and Markdown written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-eval-'));
    const r = await cli(
      'eval',
      '--endpoint',
      sim.url,
      '--head-tokens',
      '40000',
      '--facts',
      '60',
      '--block-sizes',
      '2048,4096,8192',
      '--stability',
      '4096',
      '--probes',
      '16',
      '--out',
      dir,
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    const res = JSON.parse(r.out) as EvalResult;
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')), res);
    const md = readFileSync(join(dir, 'eval.md'), 'utf8');
    for (const h of [
      '## Reachability',
      '## Survival by block size',
      '## Survival by verbosity',
      '## Loss report',
      '## Stability',
      '## QA probes',
    ])
      assert.ok(md.includes(h), h);
    assert.equal(res.defaults.length, 3);
    for (const d of res.defaults) {
      assert.equal(d.reach.reached, d.reach.total, `${d.requestedLayout}: reach`);
      assert.deepEqual(d.pins, { total: 5, kept: 5 });
    }
    assert.ok(res.head.factsByKind.decision! >= 50);
    const [planner, perBlock] = res.byBlockSize;
    assert.deepEqual(
      planner!.map((x) => x.volume),
      ['planner', 'planner', 'planner'],
    );
    // The paper's volume model: smaller blocks, more workers, more volume, more survives.
    const pb = rates(perBlock!);
    assert.ok(pb[0]! > pb[1]! && pb[1]! > pb[2]!, `per-block volume, B=2048/4096/8192: ${pb.join(', ')}`);
    const v = rates(res.byVerbosity);
    assert.ok(v[0]! < v[1]! && v[1]! < v[2]!, `concise < detailed < very detailed: ${v.join(', ')}`);
    // More volume asked, more written: the simulator honours the target.
    const out = res.byVerbosity.map((x) => x.outputTokens);
    assert.ok(out[0]! < out[1]! && out[1]! < out[2]!, out.join(', '));
    for (const x of res.byVerbosity)
      assert.ok(
        x.outputTokens <= x.summaryTarget * 1.1 && x.outputTokens >= x.summaryTarget * 0.6,
        `${x.outputTokens} of ${x.summaryTarget}`,
      );
    assert.equal(res.stability.length, 1);
    assert.equal(res.stability[0]!.method, 'embeddings');
    assert.ok(res.stability[0]!.cosine > 0.999, 'the simulator is deterministic');
    assert.equal(res.probes.asked, 16);
    assert.equal(res.probes.fullAccuracy, 1);
    assert.ok(res.probes.compactedAccuracy <= 1 && res.probes.difference <= 0);
    assert.equal(res.loss.dropped, res.loss.facts.length);
  });

  it('on a session file, and a clear error for a bad option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-eval-'));
    const file = join(dir, 's.json');
    const msgs = [{ role: 'system', content: 'agent' }];
    for (let i = 0; i < 30; i++) {
      msgs.push({ role: 'user', content: `Step ${i}: keep retryBudget${i} at ${100 + i} ms. Never touch users_table_${i}.` });
      msgs.push({ role: 'assistant', content: `DECISION: use cacheLayer${i} in src/cache/layer${i}.ts for this.` });
    }
    writeFileSync(file, JSON.stringify(msgs));
    const r = await cli(
      'eval',
      '--session',
      file,
      '--endpoint',
      sim.url,
      '--split',
      '40',
      '--block-sizes',
      '512,1024',
      '--verbosities',
      'concise,detailed',
      '--stability',
      '512',
      '--probes',
      '4',
      '--out',
      dir,
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    const res = JSON.parse(r.out) as EvalResult;
    assert.ok(res.head.facts > 60, `${res.head.facts}`);
    assert.ok(res.defaults.every((d) => d.reach.reached === d.reach.total));
    assert.ok(existsSync(join(dir, 'eval.md')));
    const bad = await cli('eval', '--endpoint', sim.url, '--verbosities', 'chatty');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--verbosities takes a comma-separated list of concise, detailed, very detailed; got "chatty"/);
  });
});
