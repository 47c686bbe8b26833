// The pieces shared by the real-VS-Code runner (scripts/test-vscode.mjs), the
// Playwright e2e suite (test/e2e) and `npm start`: the simulator, code-server,
// user settings, VSIX install, headless Chromium, and finding the webview.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CHROMIUM, CODE_SERVER_ENTRY } from './setup.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXTENSION_ID = 'splitpoint.splitpoint';

/** Flags for Debian's Chromium: no sandbox (root in a container), no GPU, nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-crash-reporter',
  '--disable-breakpad',
];

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The simulator, in-process (dist/sim.js is built by esbuild.mjs and never shipped). */
export async function startSim(opts = {}) {
  const simJs = join(ROOT, 'dist', 'sim.js');
  if (!existsSync(simJs)) throw new Error('dist/sim.js is missing: run "npm run build" first');
  const require = createRequire(import.meta.url);
  const { startSimulator } = require(simJs);
  return startSimulator({ port: 0, ...opts });
}

/** Writes <userDataDir>/User/settings.json: quiet workbench plus the given settings. */
export function writeUserSettings(userDataDir, settings = {}) {
  const dir = join(userDataDir, 'User');
  mkdirSync(dir, { recursive: true });
  const base = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'git.enabled': false,
    'window.restoreWindows': 'none',
    'chat.commandCenter.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  writeFileSync(join(dir, 'settings.json'), JSON.stringify({ ...base, ...settings }, null, 2) + '\n');
  // code-server's window is a remote one: there VS Code drops a machine-scoped setting (the endpoints) from the user
  // settings as soon as it knows the setting's scope, and takes it from the remote settings only. Which comes first
  // is a race: one e2e reload in a few read the default endpoint. Remote settings are where such a setting belongs.
  const machine = machineScoped(settings);
  if (Object.keys(machine).length > 0) {
    const file = join(userDataDir, 'Machine', 'settings.json');
    let kept = {};
    if (existsSync(file)) {
      try {
        kept = JSON.parse(readFileSync(file, 'utf8')); // npm start's earlier runs: what the user set there stays
      } catch {
        // Hand-edited with comments (JSONC): not overwritten; the endpoint then comes from the user settings alone.
        console.warn(`[settings] ${file} is not plain JSON; leaving it as it is (set splitpoint.endpoint there by hand)`);
        return;
      }
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ ...kept, ...machine }, null, 2) + '\n');
  }
}

/** The settings among `settings` that package.json scopes to the machine (applied only from remote settings in a remote window). */
export function machineScoped(settings) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const props = Object.assign({}, ...[pkg.contributes.configuration].flat().map((c) => c.properties ?? {}));
  const scope = (k) => props[k]?.scope;
  return Object.fromEntries(Object.entries(settings).filter(([k]) => scope(k) === 'machine' || scope(k) === 'machine-overridable'));
}

function codeServerArgs({ port, userDataDir, extensionsDir }) {
  return [
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
  ];
}

/** `code-server --install-extension VSIX` into the given extensions dir. */
export function installVsix(vsix, { userDataDir, extensionsDir }) {
  mkdirSync(userDataDir, { recursive: true });
  const config = join(userDataDir, 'code-server.yaml');
  if (!existsSync(config)) writeFileSync(config, '');
  const r = spawnSync(
    process.execPath,
    [
      CODE_SERVER_ENTRY,
      '--config',
      config,
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      '--install-extension',
      vsix,
      '--force',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0 || !/successfully installed/i.test(r.stdout + r.stderr)) {
    throw new Error(`code-server --install-extension failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
}

/**
 * Starts code-server on a free port and waits until it answers. The children
 * (server, extension host, file watcher) share a process group, so close()
 * ends all of them.
 */
export async function startCodeServer({ folder, userDataDir, extensionsDir, port, env = {}, log = () => {}, timeoutMs = 60_000 }) {
  if (!existsSync(CODE_SERVER_ENTRY)) throw new Error('code-server is not installed: node test/vscode/setup.mjs');
  port ??= await freePort();
  mkdirSync(userDataDir, { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  // Its own (empty) config file, so nothing is written to ~/.config/code-server.
  const config = join(userDataDir, 'code-server.yaml');
  if (!existsSync(config)) writeFileSync(config, '');
  const args = [
    CODE_SERVER_ENTRY,
    '--config',
    config,
    ...codeServerArgs({ port, userDataDir, extensionsDir }),
    ...(folder ? [folder] : []),
  ];
  const proc = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // No extension gallery: the tests and the demo never reach for a marketplace.
    env: {
      ...process.env,
      EXTENSIONS_GALLERY: JSON.stringify({
        serviceUrl: 'http://127.0.0.1:9/gallery',
        itemUrl: 'http://127.0.0.1:9/item',
        resourceUrlTemplate: 'http://127.0.0.1:9/resource',
      }),
      ...env,
    },
  });
  let output = '';
  const onData = (d) => {
    const s = d.toString();
    output += s;
    // Kept for the error messages below and code-server.log; large enough for a benchmark's V8 trace (V8_FLAGS).
    if (output.length > 8_000_000) output = output.slice(-4_000_000);
    for (const line of s.split('\n')) if (line.trim()) log(line);
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  let exited = null;
  proc.on('exit', (code, signal) => (exited = { code, signal }));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`code-server exited (${JSON.stringify(exited)}) before it listened:\n${output.slice(-4000)}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      killGroup(proc);
      throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms:\n${output.slice(-4000)}`);
    }
    await sleep(150);
  }
  return {
    url,
    port,
    proc,
    output: () => output,
    async close() {
      if (exited) return;
      killGroup(proc, 'SIGTERM');
      const until = Date.now() + 5000;
      while (!exited && Date.now() < until) await sleep(100);
      if (!exited) killGroup(proc, 'SIGKILL');
    },
  };
}

export function killGroup(proc, signal = 'SIGTERM') {
  try {
    process.kill(-proc.pid, signal);
  } catch {
    try {
      proc.kill(signal);
    } catch {
      /* gone */
    }
  }
}

/**
 * The workbench URL. With `tests`, the page carries the payload that makes the
 * extension host load `extensionDevelopmentPath` and run `extensionTestsPath`
 * (what @vscode/test-web does); paths are on the server's file system.
 */
export function workbenchUrl(base, { folder, extensionDevelopmentPath, extensionTestsPath } = {}) {
  const u = new URL(base);
  if (folder) u.searchParams.set('folder', folder);
  const payload = [];
  if (extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', remoteUri(base, extensionDevelopmentPath)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', remoteUri(base, extensionTestsPath)]);
  if (payload.length) u.searchParams.set('payload', JSON.stringify(payload));
  return u.toString();
}

function remoteUri(base, path) {
  const { host } = new URL(base);
  return `vscode-remote://${host}${pathToFileURL(path).pathname}`;
}

/** Headless Debian Chromium via playwright-core (never a downloaded browser), fresh profile. */
export async function launchBrowser({ headless = true } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: node test/vscode/setup.mjs`);
  const { chromium } = await import('playwright-core');
  const profile = tempDir('splitpoint-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until the VS Code workbench is on screen. */
export async function waitForWorkbench(page, timeoutMs = 60_000) {
  await page.waitForSelector('.monaco-workbench', { timeout: timeoutMs });
}

/**
 * Finds the frame (among page.frames(), webviews are nested iframes) where a
 * locator matches, polling until the timeout.
 */
export async function findFrame(page, make, { timeoutMs = 30_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const f of page.frames()) {
      try {
        if ((await make(f).count()) > 0) return f;
      } catch {
        /* frame detached or navigating */
      }
    }
    if (Date.now() > deadline) throw new Error('no frame has the element');
    await sleep(250);
  }
}

export function readJsonIfExists(p) {
  try {
    return JSON.parse(readFileSync(p, 'utf8'));
  } catch {
    return undefined;
  }
}
