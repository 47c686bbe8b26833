// Bundles the three shipped targets (extension, webview, cli) and the
// simulator, which is a separate file that .vscodeignore keeps out of the VSIX.
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

/** @type {esbuild.BuildOptions[]} */
const targets = [
  {
    ...common,
    entryPoints: ['src/host/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
  },
  {
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
];

if (existsSync('test/sim/index.ts')) {
  targets.push({
    ...common,
    entryPoints: ['test/sim/index.ts'],
    outfile: 'dist/sim.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  });
}

if (watch) {
  const contexts = await Promise.all(targets.map((t) => esbuild.context(t)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('[esbuild] watching');
} else {
  const started = Date.now();
  await Promise.all(targets.map((t) => esbuild.build(t)));
  console.log(`[esbuild] built ${targets.length} bundles in ${Date.now() - started} ms`);
}
