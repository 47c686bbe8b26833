// `npm start`: Splitpoint in a real VS Code, in the browser.
//
// On a fresh machine this installs the npm dependencies, builds, installs
// code-server (VS Code 1.100.3 for the browser, from npm, into
// test/vscode/.cache) and the Debian packages it needs, packages the
// extension and installs the VSIX into code-server, starts the vLLM simulator
// (scripted agent) unless SPLITPOINT_ENDPOINT names a real server, points
// splitpoint.endpoint at it, and serves VS Code with a sample workspace.
// Prints the URL and runs until Ctrl-C, then stops everything it started.
//
// Environment:
//   SPLITPOINT_ENDPOINT   your server's base URL, e.g. http://gpu-box:8000/v1 (no simulator then)
//   SPLITPOINT_PORT       code-server port (default 8080, or a free one if taken)
//   SPLITPOINT_SIM_PORT   simulator port (default: a free one)
//   SPLITPOINT_WORKSPACE  folder to open (default: a copy of test/fixtures/sample-workspace)
//   SPLITPOINT_DEMO_SESSION  session to preload when the workspace has none yet
//                         (default: test/fixtures/example-session.json; "none" for an empty start)
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, ensureDependencies } from './ensure-deps.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();
ensureDependencies(root);
build(root);

// These import playwright-free modules only; they need the build above for dist/sim.js.
const { ensureVscode, CACHE_DIR } = await import('../test/vscode/setup.mjs');
const { freePort, installVsix, startCodeServer, startSim, writeUserSettings } = await import('../test/vscode/harness.mjs');
const { packageVsix } = await import('./package.mjs');

ensureVscode();

const stateDir = join(CACHE_DIR, 'start');
const userDataDir = join(stateDir, 'user-data');
const extensionsDir = join(stateDir, 'extensions');
mkdirSync(extensionsDir, { recursive: true });

// The extension as a user gets it: a VSIX installed into this VS Code.
const { vsix } = packageVsix({ root, out: join(stateDir, 'splitpoint.vsix'), build: false, quiet: true });
installVsix(vsix, { userDataDir, extensionsDir });
console.log(`[start] installed ${vsix}`);

// The model server.
let sim;
let endpoint = process.env.SPLITPOINT_ENDPOINT?.trim();
if (endpoint) {
  try {
    const r = await fetch(`${endpoint.replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(5000) });
    const body = r.ok ? await r.json() : undefined;
    console.log(
      `[start] using ${endpoint}: ${r.ok ? `models ${body?.data?.map((m) => `${m.id} (max_model_len ${m.max_model_len ?? '?'})`).join(', ')}` : `HTTP ${r.status}`}`,
    );
  } catch (err) {
    console.warn(
      `[start] warning: ${endpoint} did not answer /models (${err instanceof Error ? err.message : String(err)}); starting anyway`,
    );
  }
} else {
  const script = JSON.parse(readFileSync(join(root, 'test', 'vscode', 'fixtures', 'agent-script.json'), 'utf8'));
  sim = await startSim({ port: Number(process.env.SPLITPOINT_SIM_PORT ?? 0), script, timeScale: 0.6 });
  endpoint = sim.url;
  console.log(`[start] vLLM simulator (scripted agent) at ${endpoint}; set SPLITPOINT_ENDPOINT=http://HOST:8000/v1 to use your own server`);
}

// User settings: keep what the user changed in earlier runs, point the endpoint at this run's server.
const settingsFile = join(userDataDir, 'User', 'settings.json');
let previous = {};
try {
  previous = JSON.parse(readFileSync(settingsFile, 'utf8'));
} catch {
  /* first run, or hand-edited with comments: start over */
}
writeUserSettings(userDataDir, { ...previous, 'splitpoint.endpoint': endpoint });

// The workspace: a copy of the sample, kept between runs so sessions persist.
const workspace = process.env.SPLITPOINT_WORKSPACE
  ? resolve(process.env.SPLITPOINT_WORKSPACE)
  : join(tmpdir(), 'splitpoint-sample-workspace');
if (!existsSync(workspace)) cpSync(join(root, 'test', 'fixtures', 'sample-workspace'), workspace, { recursive: true });

async function portFree(port) {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}
let port = Number(process.env.SPLITPOINT_PORT ?? 8080);
if (!(await portFree(port))) port = await freePort();

// The first session: the example conversation, imported by the extension when its library is empty.
const demoSetting = process.env.SPLITPOINT_DEMO_SESSION?.trim();
const demo = demoSetting === 'none' ? undefined : resolve(demoSetting || join(root, 'test', 'fixtures', 'example-session.json'));
const cs = await startCodeServer({
  folder: workspace,
  userDataDir,
  extensionsDir,
  port,
  env: demo ? { SPLITPOINT_DEMO_SESSION: demo } : {},
});
const url = `${cs.url}/?folder=${encodeURIComponent(workspace)}`;

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('\n[start] stopping');
  await cs.close();
  await sim?.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
cs.proc.on('exit', (code) => {
  if (!stopping) {
    console.error(`[start] code-server exited (${code}):\n${cs.output().slice(-2000)}`);
    void stop(1);
  }
});

console.log(`
[start] ready in ${((Date.now() - started) / 1000).toFixed(1)} s

  VS Code:    ${url}
  endpoint:   ${endpoint}${sim ? ' (simulator)' : ''}
  workspace:  ${workspace}
  session:    ${demo ? `${demo} (preloaded when the workspace has no session yet)` : 'empty'}

  Open the URL and click the Splitpoint icon in the activity bar: the example
  session is open. Drag the split handle on the timeline and watch the gauges,
  then type /compact "keep the users-table constraint" and Adopt. A new
  session (+) talks to the ${sim ? 'scripted simulator' : 'server'}: try "Please check the parser".
  Ctrl-C stops code-server${sim ? ' and the simulator' : ''}.
`);

if ((process.env.DISPLAY || process.env.WAYLAND_DISPLAY) && !process.env.CI && spawnSync('which', ['xdg-open']).status === 0) {
  spawnSync('xdg-open', [url], { stdio: 'ignore' });
}
writeFileSync(join(stateDir, 'url.txt'), url + '\n');
