// `npm run bench [-- NAME]`: builds, then runs bench/NAME.bench.ts (all when no name).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wanted = process.argv[2];
const all = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
const chosen = wanted ? all.filter((f) => f === `${wanted}.bench.ts`) : all;
if (chosen.length === 0) {
  console.error(`no benchmark named ${wanted}; have: ${all.map((f) => f.replace('.bench.ts', '')).join(', ')}`);
  process.exit(2);
}
if (spawnSync(process.execPath, [join(root, 'esbuild.mjs')], { stdio: 'inherit', cwd: root }).status !== 0) process.exit(1);
let failed = 0;
for (const f of chosen) {
  const r = spawnSync(process.execPath, ['--import=tsx', join(root, 'bench', f)], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
