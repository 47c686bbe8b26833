// The bundles esbuild.mjs builds, as data: the unit test that checks the shipped bundles
// (test/unit/bundleCharset.test.ts) builds these same targets in memory.
import { existsSync } from 'node:fs';

/** @param {{ production: boolean }} o @returns {import('esbuild').BuildOptions[]} */
export function bundleTargets({ production }) {
  const common = {
    bundle: true,
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
    legalComments: 'none',
  };

  // The tokenizer's BPE ranks are ~1 MB of source. Bundled inline they would be
  // parsed on every activation even though they are only evaluated on first
  // use, so they live in their own file that the lazy import loads at run time.
  const RANKS = 'js-tiktoken/ranks/cl100k_base';
  const RANKS_FILE = './tokenizer-ranks.js';
  /** @type {import('esbuild').Plugin} */
  const ranksApart = {
    name: 'ranks-apart',
    setup(build) {
      build.onResolve({ filter: /^js-tiktoken\/ranks\/cl100k_base$/ }, () => ({ path: RANKS_FILE, external: true }));
    },
  };

  /** @type {import('esbuild').BuildOptions[]} */
  const targets = [
    {
      ...common,
      entryPoints: { 'tokenizer-ranks': RANKS },
      outdir: 'dist',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      sourcemap: false,
    },
    {
      ...common,
      entryPoints: ['src/host/extension.ts'],
      outfile: 'dist/extension.js',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode'],
      plugins: [ranksApart],
    },
    {
      // Token counting off the extension host's thread (src/node/backgroundCounter.ts starts it).
      ...common,
      entryPoints: ['src/node/countWorker.ts'],
      outfile: 'dist/countWorker.js',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      plugins: [ranksApart],
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
      entryPoints: ['webview/review/main.ts'],
      outfile: 'dist/review.js',
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
      plugins: [ranksApart],
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
      plugins: [ranksApart],
    });
  }
  return targets;
}
