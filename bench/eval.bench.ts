/**
 * `splitpoint eval` on a generated 120K-token head against the bundled
 * simulator, as a user runs it: the built CLI in its own process, wall time
 * measured around it. Target (issue 14): ≤ 60 s on the 2-core machine.
 * Run with `npm run bench -- eval`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const out = mkdtempSync(join(tmpdir(), 'sp-eval-bench-'));
const load = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const t0 = performance.now();
const r = spawnSync(process.execPath, ['dist/cli.js', 'eval', '--out', out], { encoding: 'utf8' });
const ms = performance.now() - t0;
if (r.status !== 0) {
  console.error(r.stderr);
  process.exit(1);
}
const res = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as {
  head: { tokens: number; facts: number };
  defaults: Array<{
    requestedLayout: string;
    layout: string;
    blocks: number;
    reach: { reached: number; total: number };
    pins: { kept: number; total: number };
  }>;
};
rmSync(out, { recursive: true, force: true });
console.log(`machine: ${cpus().length} cores, load average before the run ${load}`);
console.log(`command: node dist/cli.js eval   (generated head, bundled simulator, default series, 24 probes)`);
console.log(`head: ${res.head.tokens} tokens, ${res.head.facts} facts`);
for (const d of res.defaults) {
  console.log(
    `  ${d.requestedLayout.padEnd(13)} → ${d.layout}, ${d.blocks} blocks: reach ${d.reach.reached}/${d.reach.total}, pins ${d.pins.kept}/${d.pins.total}`,
  );
}
console.log('progress the command printed:');
console.log(r.stderr.trimEnd().replace(/^/gm, '  '));
console.log(`wall time: ${(ms / 1000).toFixed(1)} s (target ≤ 60 s): ${ms <= 60_000 ? 'met' : 'MISSED'}`);
