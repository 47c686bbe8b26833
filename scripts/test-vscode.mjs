// The real-VS-Code tests, through code-server (VS Code 1.100.3 for the browser)
// and headless Debian Chromium:
//
//   host  test/vscode/suite/*.test.ts, bundled to CJS by esbuild and run by
//         mocha inside code-server's extension host (the web workbench's
//         extensionDevelopmentPath/extensionTestsPath payload, as
//         @vscode/test-web does). Two page loads: phase "main", then a reload
//         ("after-reload") to check the session is restored. Results come back
//         through files (NDJSON events while running, a JSON summary).
//   e2e   test/e2e/*.e2e.ts: Playwright (playwright-core) clicking through the
//         Splitpoint view of the packaged VSIX installed into code-server.
//
//   node scripts/test-vscode.mjs [host] [e2e] [--no-build] [--grep TEXT]
//
// scripts/test.mjs calls:  const { passed, failed } = await runVscodeTests({ build: false });
import { spawnSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureVscode } from '../test/vscode/setup.mjs';
import {
  launchBrowser,
  readJsonIfExists,
  startCodeServer,
  tempDir,
  waitForWorkbench,
  workbenchUrl,
  writeUserSettings,
} from '../test/vscode/harness.mjs';
import { packageVsix } from './package.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, '.test-output');
const SUITE_SRC = join(ROOT, 'test', 'vscode', 'suite');
// Inside the repo so that the bundle's require('mocha') finds the repo's mocha.
const SUITE_OUT = join(ROOT, 'test', 'vscode', '.cache', 'suite-out');
const SAMPLE_WORKSPACE = join(ROOT, 'test', 'fixtures', 'sample-workspace');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What to stop if the run is interrupted (Ctrl-C, CI timeout). */
const cleanups = new Set();
let signalsHooked = false;
function hookSignals() {
  if (signalsHooked) return;
  signalsHooked = true;
  const stop = async (sig) => {
    await Promise.allSettled([...cleanups].map((f) => f()));
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

/** Bundles the in-host suite: index.js (the extension-tests module) and one file per test. */
/** `suffix`: which suite files to run; `.test.ts` are the tests, `.bench.ts` the benchmarks (bench/hostCpu.bench.ts). */
export async function bundleSuite({ suffix = '.test.ts' } = {}) {
  const esbuild = await import('esbuild');
  rmSync(SUITE_OUT, { recursive: true, force: true });
  const tests = readdirSync(SUITE_SRC)
    .filter((f) => f.endsWith(suffix))
    .sort();
  await esbuild.build({
    entryPoints: [join(SUITE_SRC, 'index.ts'), ...tests.map((f) => join(SUITE_SRC, f))],
    outdir: SUITE_OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'mocha'],
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  return { index: join(SUITE_OUT, 'index.js'), tests: tests.map((f) => join(SUITE_OUT, f.replace(/\.ts$/, '.js'))) };
}

/** Prints a result event line from the suite. */
function printEvent(e, log) {
  const mark = e.state === 'passed' ? '  ✔' : e.state === 'failed' ? '  ✖' : '  -';
  log(`${mark} ${e.title}${e.ms > 500 ? ` (${e.ms} ms)` : ''}`);
  if (e.state === 'failed' && e.error)
    log(
      e.error
        .split('\n')
        .slice(0, 6)
        .map((l) => `      ${l}`)
        .join('\n'),
    );
}

/** Loads the workbench with the test payload and waits for the suite's result file. */
async function runPhase({ page, url, cfg, cfgPath, log, timeoutMs, shot }) {
  writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
  rmSync(cfg.resultFile, { force: true });
  rmSync(cfg.eventsFile, { force: true });
  log(`[vscode] host suite, phase ${cfg.phase}: ${cfg.files.length} file(s)`);
  const started = Date.now();
  await page.goto(url);
  await waitForWorkbench(page).catch(() => {});
  let printed = 0;
  const deadline = Date.now() + timeoutMs;
  let result;
  for (;;) {
    if (existsSync(cfg.eventsFile)) {
      const lines = readFileSync(cfg.eventsFile, 'utf8').split('\n').filter(Boolean);
      for (; printed < lines.length; printed++) printEvent(JSON.parse(lines[printed]), log);
    }
    result = readJsonIfExists(cfg.resultFile);
    if (result) break;
    if (Date.now() > deadline) {
      result = {
        phase: cfg.phase,
        passed: 0,
        failed: 1,
        pending: 0,
        fatal: `no result within ${timeoutMs / 1000} s (the extension host did not run the suite?)`,
        tests: [],
      };
      break;
    }
    await sleep(250);
  }
  if (existsSync(cfg.eventsFile)) {
    const lines = readFileSync(cfg.eventsFile, 'utf8').split('\n').filter(Boolean);
    for (; printed < lines.length; printed++) printEvent(JSON.parse(lines[printed]), log);
  }
  if (result.fatal) log(`  ✖ suite crashed: ${result.fatal}`);
  await page.screenshot({ path: shot }).catch(() => {});
  log(
    `[vscode] phase ${cfg.phase}: ${result.passed} passed, ${result.failed} failed${result.pending ? `, ${result.pending} pending` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return result;
}

/** The in-extension-host mocha suite. */
export async function runHostSuite({ log = console.log, grep, timeoutMs = 10 * 60_000, suffix = '.test.ts', settings = {} } = {}) {
  const outDir = join(OUT, 'vscode');
  mkdirSync(outDir, { recursive: true });
  const bundle = await bundleSuite({ suffix });
  const work = tempDir('splitpoint-vscode-');
  const workspace = join(work, 'workspace');
  cpSync(SAMPLE_WORKSPACE, workspace, { recursive: true });
  const userDataDir = join(work, 'user-data');
  const extensionsDir = join(work, 'extensions');
  writeUserSettings(userDataDir, settings);
  const cfgPath = join(work, 'suite-config.json');
  const base = {
    resultFile: join(outDir, 'host-result.json'),
    eventsFile: join(outDir, 'host-events.ndjson'),
    stateFile: join(work, 'suite-state.json'),
    userDataDir,
    workspace,
    repoRoot: ROOT,
    timeoutMs: 60_000,
    // The tests talk to a simulator in the extension host; the benchmarks start their own in a separate process,
    // and one in the host would put its tokenizer (some 200,000 objects) in the heap every collection marks.
    inProcessSimulator: suffix === '.test.ts',
    ...(grep ? { grep } : {}),
  };
  let cs;
  let browser;
  const totals = { passed: 0, failed: 0, pending: 0, tests: [] };
  const cleanup = async () => {
    await browser?.close();
    await cs?.close();
  };
  cleanups.add(cleanup);
  try {
    cs = await startCodeServer({ folder: workspace, userDataDir, extensionsDir, env: { SPLITPOINT_VSCODE_TEST_CONFIG: cfgPath } });
    browser = await launchBrowser();
    const url = workbenchUrl(cs.url, { folder: workspace, extensionDevelopmentPath: ROOT, extensionTestsPath: bundle.index });
    const phases = [
      { phase: 'main', files: bundle.tests },
      { phase: 'after-reload', files: bundle.tests.filter((f) => f.endsWith('reload.test.js')) },
    ].filter((p) => p.files.length > 0);
    for (const p of phases) {
      const r = await runPhase({
        page: browser.page,
        url,
        cfg: { ...base, ...p },
        cfgPath,
        log,
        timeoutMs,
        shot: join(outDir, `host-${p.phase}.png`),
      });
      totals.passed += r.passed;
      totals.failed += r.failed;
      totals.pending += r.pending ?? 0;
      totals.tests.push(...(r.tests ?? []).map((t) => ({ ...t, phase: p.phase })));
      writeFileSync(join(outDir, `host-result-${p.phase}.json`), JSON.stringify(r, null, 2));
    }
  } catch (err) {
    log(`[vscode] host suite could not run: ${err instanceof Error ? err.stack : String(err)}`);
    totals.failed += 1;
  } finally {
    if (cs) {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'code-server.log'), cs.output());
    }
    await cleanup();
    cleanups.delete(cleanup);
    keepExtensionLogs(work, outDir);
    rmSync(work, { recursive: true, force: true });
  }
  return totals;
}

/** Copies the extension's own log channels out of a run's profile before it is deleted, for diagnosis. */
function keepExtensionLogs(work, outDir) {
  const found = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'Splitpoint.log') found.push(p);
    }
  };
  walk(work);
  mkdirSync(outDir, { recursive: true });
  found.forEach((p, i) => cpSync(p, join(outDir, `Splitpoint-${i + 1}.log`)));
}

/** The Playwright e2e suite, in its own mocha process (tsx), against the packaged VSIX. */
export async function runE2eSuite({ log = console.log, grep } = {}) {
  const outDir = join(OUT, 'e2e');
  mkdirSync(outDir, { recursive: true });
  const files = existsSync(join(ROOT, 'test', 'e2e'))
    ? readdirSync(join(ROOT, 'test', 'e2e'))
        .filter((f) => f.endsWith('.e2e.ts'))
        .sort()
        .map((f) => join(ROOT, 'test', 'e2e', f))
    : [];
  if (files.length === 0) return { passed: 0, failed: 0, pending: 0 };
  const { vsix } = packageVsix({ root: ROOT, out: join(outDir, 'splitpoint.vsix'), build: false, quiet: true });
  log(`[vscode] e2e suite: ${files.length} file(s), VSIX ${vsix}`);
  const statsFile = join(outDir, 'stats.json');
  rmSync(statsFile, { force: true });
  const args = [
    join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'),
    '--import=tsx',
    '--reporter',
    join(ROOT, 'scripts', 'mocha-reporter.cjs'),
    '--reporter-option',
    `statsFile=${statsFile}`,
    '--timeout',
    '120000',
    ...(grep ? ['--grep', grep] : []),
    ...files,
  ];
  const status = await new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, SPLITPOINT_VSIX: vsix, SPLITPOINT_E2E_OUTPUT: outDir },
    });
    // mocha's own wrapper forwards the signal to the test process, which closes code-server and Chromium.
    const stop = () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
        setTimeout(r, 8000);
      });
    cleanups.add(stop);
    child.on('exit', (code) => {
      cleanups.delete(stop);
      resolve(code ?? 1);
    });
  });
  const stats = readJsonIfExists(statsFile) ?? { passed: 0, failed: 1, pending: 0 };
  if (status !== 0 && stats.failed === 0) stats.failed = 1;
  log(`[vscode] e2e: ${stats.passed} passed, ${stats.failed} failed; screenshots in ${outDir}`);
  return stats;
}

/**
 * Everything: install code-server if missing, build (unless build: false),
 * then the host suite and the e2e suite. Resolves to summed counts.
 */
export async function runVscodeTests({ build = true, suites = ['host', 'e2e'], log = console.log, grep } = {}) {
  const started = Date.now();
  hookSignals();
  ensureVscode({ quiet: false });
  if (build) {
    const r = spawnSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) return { passed: 0, failed: 1, pending: 0, ms: Date.now() - started };
  }
  const total = { passed: 0, failed: 0, pending: 0 };
  for (const s of suites) {
    const t0 = Date.now();
    const r = s === 'host' ? await runHostSuite({ log, grep }) : s === 'e2e' ? await runE2eSuite({ log, grep }) : null;
    if (!r) throw new Error(`unknown suite ${s}`);
    total.passed += r.passed;
    total.failed += r.failed;
    total.pending += r.pending ?? 0;
    log(`[vscode] suite ${s} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  return { ...total, ms: Date.now() - started };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const g = argv.indexOf('--grep');
  const grep = g >= 0 ? argv[g + 1] : undefined;
  const chosen = argv.filter((a, i) => (a === 'host' || a === 'e2e') && argv[i - 1] !== '--grep');
  const r = await runVscodeTests({ build: !argv.includes('--no-build'), suites: chosen.length ? chosen : ['host', 'e2e'], grep });
  console.log(`\n[vscode] finished in ${(r.ms / 1000).toFixed(1)} s`);
  console.log(`${r.passed} passed, ${r.failed} failed`);
  process.exit(r.failed === 0 ? 0 : 1);
}
