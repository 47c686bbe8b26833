// `npm test`: installs what the suites need, typechecks, builds, runs every
// suite and ends with one plain line "N passed, N failed" summed over them.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, mkdirSync, rmSync } from 'node:fs';
import { ensureDebianPackages, ensureDependencies } from './ensure-deps.mjs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  return r.status ?? 1;
}

function listTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTests(p));
    else if (entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

/** Runs one mocha suite in its own process and reads its counts from the JSON stats file. */
function runMochaSuite(name, files, extraArgs = []) {
  if (files.length === 0) return { passed: 0, failed: 0 };
  console.log(`\n[test] suite ${name}: ${files.length} file(s)`);
  const statsFile = join(root, '.test-output', `${name}.stats.json`);
  const status = run(
    process.execPath,
    [
      join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'),
      '--import=tsx',
      '--reporter',
      join(root, 'scripts', 'mocha-reporter.cjs'),
      '--reporter-option',
      `statsFile=${statsFile}`,
      ...extraArgs,
      ...files,
    ],
    { env: { ...process.env, SPLITPOINT_TEST_OUTPUT: join(root, '.test-output') } },
  );
  let stats;
  try {
    stats = JSON.parse(readFileSyncSafe(statsFile));
  } catch {
    stats = { passed: 0, failed: 1 };
    console.log(`[test] suite ${name} crashed before reporting (exit ${status})`);
  }
  if (status !== 0 && stats.failed === 0) stats.failed = 1;
  return stats;
}

function readFileSyncSafe(p) {
  return readFileSync(p, 'utf8');
}

let passed = 0;
let failed = 0;
const started = Date.now();
try {
  ensureDependencies(root);
  ensureDebianPackages([
    { name: 'chromium', probe: '/usr/bin/chromium' },
    { name: 'ripgrep', probe: '/usr/bin/rg' },
    // run_command's sandbox; the suite checks confinement wherever bwrap can run.
    { name: 'bubblewrap', probe: '/usr/bin/bwrap' },
  ]);
  rmSync(join(root, '.test-output'), { recursive: true, force: true });
  mkdirSync(join(root, '.test-output'), { recursive: true });

  console.log('[test] typecheck');
  if (
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.']) === 0 &&
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'webview']) === 0
  ) {
    passed += 1;
  } else {
    console.log('[test] FAILED: typecheck');
    failed += 1;
  }

  // Lint is part of the test: ESLint (typescript-eslint) and Prettier's check. SPLITPOINT_LINT=0 skips it
  // while iterating locally; CI never sets it.
  const LINT_IN_TEST = process.env.SPLITPOINT_LINT !== '0';
  if (LINT_IN_TEST) {
    console.log('[test] lint (eslint + prettier --check)');
    if (
      run(process.execPath, [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '.']) === 0 &&
      run(process.execPath, [join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', '.']) === 0
    ) {
      passed += 1;
    } else {
      console.log('[test] FAILED: lint');
      failed += 1;
    }
  }

  console.log('[test] build');
  if (run(process.execPath, [join(root, 'esbuild.mjs')]) === 0) passed += 1;
  else {
    console.log('[test] FAILED: build');
    failed += 1;
  }

  for (const suite of ['unit', 'integration', 'fuzz', 'webview']) {
    const s = runMochaSuite(suite, listTests(join(root, 'test', suite)), ['--timeout', '20000']);
    passed += s.passed;
    failed += s.failed;
  }

  // Real VS Code (code-server) and end-to-end in Chromium; installs code-server on first use.
  console.log('\n[test] suite vscode (host) and e2e');
  try {
    // Imported only now: it needs packages that ensureDependencies has just installed.
    const { runVscodeTests } = await import('./test-vscode.mjs');
    const v = await runVscodeTests({ build: false });
    passed += v.passed;
    failed += v.failed;
  } catch (err) {
    console.log(`[test] FAILED: the VS Code suites could not run: ${err instanceof Error ? err.stack : String(err)}`);
    failed += 1;
  }
} catch (err) {
  console.error(`[test] ${err instanceof Error ? err.message : String(err)}`);
  failed += 1;
}
console.log(`\n[test] finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
