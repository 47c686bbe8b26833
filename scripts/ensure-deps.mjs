// Installs npm dependencies when node_modules is missing or older than the
// lockfile, so `npm start` and `npm test` work on a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function ensureDependencies(root) {
  const lock = join(root, 'package-lock.json');
  const marker = join(root, 'node_modules', '.package-lock.json');
  const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs);
  if (!stale) return;
  console.log('[setup] installing npm dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) throw new Error('npm ci failed');
}

export function build(root) {
  const r = spawnSync(process.execPath, [join(root, 'esbuild.mjs')], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) throw new Error('build failed');
}

/**
 * Installs Debian packages that a suite needs when their command is missing
 * (the browser tests need Debian's chromium; no browser is ever downloaded).
 * CI and fresh machines run as root; elsewhere this says what to install.
 */
export function ensureDebianPackages(packages) {
  const missing = packages.filter((p) => !existsSync(p.probe));
  if (missing.length === 0) return;
  const names = missing.map((p) => p.name);
  if (process.getuid && process.getuid() !== 0) {
    throw new Error(`missing ${names.join(', ')}: install with "sudo apt-get install -y ${names.join(' ')}"`);
  }
  console.log(`[setup] installing Debian packages: ${names.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env }).status !== 0) throw new Error('apt-get update failed');
  if (spawnSync('apt-get', ['install', '-y', '-qq', ...names], { stdio: 'inherit', env }).status !== 0) {
    throw new Error(`apt-get install ${names.join(' ')} failed`);
  }
}
