// Installs what the real-VS-Code tests and `npm start` need, once:
//   - Debian packages (native build deps of code-server, ripgrep, chromium);
//   - code-server (= VS Code for the browser) from npm, into its own folder
//     test/vscode/.cache/code-server, never a dependency of the extension.
// Idempotent: when everything is in place it returns in a few milliseconds.
//
//   node test/vscode/setup.mjs            install if missing, print paths
//   node test/vscode/setup.mjs --check    exit 1 if anything is missing, install nothing
//
// Nothing here downloads VS Code, a browser or a binary: code-server comes from
// the npm registry, Chromium and ripgrep from Debian, and @vscode/ripgrep's
// postinstall is handed Debian's rg through its download cache.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const CODE_SERVER_VERSION = '4.100.3'; // = VS Code 1.100.3, runs on Node 20
export const VSCODE_VERSION = '1.100.3';
const RIPGREP_PKG_VERSION = '1.15.11'; // @vscode/ripgrep used by VS Code 1.100
const RIPGREP_ASSET = 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz';

export const DEBIAN_PACKAGES = ['libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'pkg-config', 'ripgrep', 'chromium'];
export const CHROMIUM = process.env.SPLITPOINT_CHROMIUM ?? '/usr/bin/chromium';

const here = dirname(fileURLToPath(import.meta.url));
export const CACHE_DIR = join(here, '.cache');
export const CODE_SERVER_DIR = join(CACHE_DIR, 'code-server');
export const CODE_SERVER_ENTRY = join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const MARKER = join(CODE_SERVER_DIR, '.installed.json');

function log(quiet, ...args) {
  if (!quiet) console.log('[setup]', ...args);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
}

/** Debian packages that are not installed (dpkg says so). */
export function missingDebianPackages() {
  if (!existsSync('/usr/bin/dpkg-query')) return [];
  return DEBIAN_PACKAGES.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

function ensureDebianPackages(quiet) {
  const missing = missingDebianPackages();
  if (missing.length === 0) return false;
  if (process.getuid && process.getuid() !== 0) {
    throw new Error(`missing Debian packages: ${missing.join(' ')}; run as root or: sudo apt-get install -y ${missing.join(' ')}`);
  }
  log(quiet, `apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { env });
  return true;
}

/** The folder @vscode/ripgrep's postinstall looks in before downloading. */
function ripgrepCacheDir() {
  return join(process.env.TMPDIR || tmpdir(), `vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}`);
}

/** Puts Debian's rg where @vscode/ripgrep's postinstall finds it, so it downloads nothing. */
function seedRipgrepCache(quiet) {
  const dir = ripgrepCacheDir();
  const archive = join(dir, RIPGREP_ASSET);
  if (existsSync(archive)) return;
  const rg = ['/usr/bin/rg', '/bin/rg'].find((p) => existsSync(p));
  if (!rg) throw new Error('ripgrep is not installed (Debian package "ripgrep")');
  mkdirSync(dir, { recursive: true });
  const stage = join(dir, 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage);
  copyFileSync(rg, join(stage, 'rg'));
  chmodSync(join(stage, 'rg'), 0o755);
  run('tar', ['-czf', archive, '-C', stage, 'rg']);
  rmSync(stage, { recursive: true, force: true });
  log(quiet, `seeded ${archive} with ${rg}`);
}

export function codeServerInstalled() {
  if (!existsSync(MARKER) || !existsSync(CODE_SERVER_ENTRY)) return false;
  try {
    const m = JSON.parse(readFileSync(MARKER, 'utf8'));
    return m.version === CODE_SERVER_VERSION;
  } catch {
    return false;
  }
}

function installCodeServer(quiet) {
  seedRipgrepCache(quiet);
  mkdirSync(CODE_SERVER_DIR, { recursive: true });
  // Its own package.json makes this folder its own npm prefix: nothing lands in the repo's node_modules.
  writeFileSync(
    join(CODE_SERVER_DIR, 'package.json'),
    JSON.stringify(
      {
        name: 'splitpoint-code-server-cache',
        private: true,
        description: 'code-server for tests and npm start; not part of the extension',
        dependencies: { 'code-server': CODE_SERVER_VERSION },
      },
      null,
      2,
    ) + '\n',
  );
  const env = {
    ...process.env,
    npm_config_unsafe_perm: 'true', // postinstall as root
    npm_config_yes: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    TMPDIR: process.env.TMPDIR || tmpdir(),
  };
  // node-gyp would fetch Node headers; Debian/NodeSource Node ships them under /usr/include/node.
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  log(quiet, `npm install code-server@${CODE_SERVER_VERSION} into ${CODE_SERVER_DIR} (a few minutes the first time)`);
  run('npm', ['install', '--no-package-lock', '--no-save', '--loglevel=error', `code-server@${CODE_SERVER_VERSION}`], {
    cwd: CODE_SERVER_DIR,
    env,
  });
  if (!existsSync(CODE_SERVER_ENTRY)) throw new Error(`code-server install finished but ${CODE_SERVER_ENTRY} is missing`);
  // The bundled VS Code must report the version we expect.
  const product = JSON.parse(readFileSync(join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'lib', 'vscode', 'product.json'), 'utf8'));
  const vscodePkg = JSON.parse(readFileSync(join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'lib', 'vscode', 'package.json'), 'utf8'));
  writeFileSync(
    MARKER,
    JSON.stringify(
      { version: CODE_SERVER_VERSION, vscode: vscodePkg.version, commit: product.commit ?? null, installedAt: new Date().toISOString() },
      null,
      2,
    ) + '\n',
  );
}

/**
 * Makes sure Debian packages and code-server are installed. Returns paths.
 * Fast no-op (a stat and a few dpkg-query calls) when they are.
 */
export function ensureVscode({ quiet = false } = {}) {
  const started = Date.now();
  const aptRan = ensureDebianPackages(quiet);
  let installed = false;
  if (!codeServerInstalled()) {
    installCodeServer(quiet);
    installed = true;
  }
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (Debian package "chromium")`);
  const ms = Date.now() - started;
  log(
    quiet,
    `${aptRan || installed ? 'installed' : 'already installed'}: code-server ${CODE_SERVER_VERSION} (VS Code ${VSCODE_VERSION}), chromium, in ${(ms / 1000).toFixed(1)} s`,
  );
  return { codeServerEntry: CODE_SERVER_ENTRY, codeServerDir: CODE_SERVER_DIR, chromium: CHROMIUM, ms, changed: aptRan || installed };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--check')) {
    const missing = missingDebianPackages();
    const ok = missing.length === 0 && codeServerInstalled();
    console.log(ok ? 'ok' : `missing: ${[...missing, ...(codeServerInstalled() ? [] : [`code-server@${CODE_SERVER_VERSION}`])].join(' ')}`);
    process.exit(ok ? 0 : 1);
  }
  try {
    const r = ensureVscode();
    console.log(JSON.stringify({ codeServerEntry: r.codeServerEntry, chromium: r.chromium, seconds: r.ms / 1000 }));
  } catch (err) {
    console.error(`[setup] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
