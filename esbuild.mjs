// Bundles the targets scripts/bundles.mjs lists: the shipped ones and the
// simulator, which is a separate file that .vscodeignore keeps out of the VSIX.
import * as esbuild from 'esbuild';
import { bundleTargets } from './scripts/bundles.mjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const targets = bundleTargets({ production });

if (watch) {
  const contexts = await Promise.all(targets.map((t) => esbuild.context(t)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('[esbuild] watching');
} else {
  const started = Date.now();
  await Promise.all(targets.map((t) => esbuild.build(t)));
  console.log(`[esbuild] built ${targets.length} bundles in ${Date.now() - started} ms`);
}
