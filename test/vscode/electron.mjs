// The same in-extension-host suite on desktop VS Code, through
// @vscode/test-electron. Only where VS Code can be downloaded (CI machines
// here cannot; they use scripts/test-vscode.mjs and code-server):
//
//   npm i -D @vscode/test-electron        # not a dependency of this repo
//   npm run build && node test/vscode/electron.mjs
//   (headless Linux: xvfb-run -a node test/vscode/electron.mjs)
//
// Phase "main" runs every test file; then VS Code is started again on the
// same profile ("after-reload") to check the session was restored.
import { cpSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir, writeUserSettings } from './harness.mjs';
import { VSCODE_VERSION } from './setup.mjs';
import { bundleSuite } from '../../scripts/test-vscode.mjs';

const modName = '@vscode/test-electron';
let te;
try {
  te = await import(modName);
} catch {
  console.error('@vscode/test-electron is not installed: npm i -D @vscode/test-electron (it downloads VS Code, which needs the network)');
  process.exit(2);
}

const out = join(ROOT, '.test-output', 'vscode-electron');
mkdirSync(out, { recursive: true });
const bundle = await bundleSuite();
const work = tempDir('splitpoint-electron-');
const workspace = join(work, 'workspace');
cpSync(join(ROOT, 'test', 'fixtures', 'sample-workspace'), workspace, { recursive: true });
const userDataDir = join(work, 'user-data');
writeUserSettings(userDataDir, {});
const cfgPath = join(work, 'suite-config.json');
let passed = 0;
let failed = 0;
for (const phase of ['main', 'after-reload']) {
  const cfg = {
    phase,
    files: phase === 'main' ? bundle.tests : bundle.tests.filter((f) => f.endsWith('reload.test.js')),
    resultFile: join(out, `host-result-${phase}.json`),
    eventsFile: join(out, `host-events-${phase}.ndjson`),
    stateFile: join(work, 'suite-state.json'),
    userDataDir,
    workspace,
    repoRoot: ROOT,
    timeoutMs: 60_000,
    inProcessSimulator: true,
  };
  writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
  rmSync(cfg.resultFile, { force: true });
  try {
    await te.runTests({
      version: VSCODE_VERSION,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: bundle.index,
      extensionTestsEnv: { SPLITPOINT_VSCODE_TEST_CONFIG: cfgPath },
      launchArgs: [
        workspace,
        '--user-data-dir',
        userDataDir,
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
  } catch (err) {
    console.error(`[electron] VS Code exited with an error: ${err instanceof Error ? err.message : String(err)}`);
  }
  let r;
  try {
    r = JSON.parse(readFileSync(cfg.resultFile, 'utf8'));
  } catch {
    r = { passed: 0, failed: 1, tests: [], fatal: 'no result file' };
  }
  for (const t of r.tests)
    console.log(
      `${t.state === 'passed' ? '  ✔' : t.state === 'failed' ? '  ✖' : '  -'} ${t.title}${t.error ? `\n      ${t.error.split('\n')[0]}` : ''}`,
    );
  if (r.fatal) console.log(`  ✖ ${r.fatal}`);
  passed += r.passed;
  failed += r.failed;
}
rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
