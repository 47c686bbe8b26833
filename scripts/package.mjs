// `npm run package`: a production build, then a VSIX by @vscode/vsce, offline.
// What goes in: dist/ without the simulator and source maps, media/,
// package.json, README.md, LICENSE; test/unit/vsix.test.ts checks the result.
//
// vsce is run on a staged copy holding exactly those files, because vsce lets
// any `!pattern` of .vscodeignore win over every ignore line whatever their
// order: with `!dist/**` in the allowlist, `dist/sim.js` and `dist/*.map`
// would still be packaged. (.vscodeignore still applies inside the stage.)
//
//   node scripts/package.mjs [--out FILE] [--no-build] [--dev]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, closeSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export function vsixName(root = ROOT) {
  const pkg = JSON.parse(
    spawnSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: root, encoding: 'utf8' }).stdout,
  );
  return `${pkg.name}-${pkg.version}.vsix`;
}

function vsce(root, cwd, args) {
  const bin = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  return spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, VSCE_TELEMETRY: 'off' } });
}

/** dist/ files that never ship: the simulator (test and demo only) and source maps. */
export function shipsFromDist(name) {
  return !name.endsWith('.map') && name !== 'sim.js';
}

/** A temp folder with exactly what the VSIX may contain. */
export function stageExtension(root = ROOT) {
  const stage = mkdtempSync(join(tmpdir(), 'splitpoint-vsix-'));
  for (const f of ['package.json', 'README.md', 'LICENSE', '.vscodeignore']) {
    if (!existsSync(join(root, f))) throw new Error(`${f} is missing`);
    cpSync(join(root, f), join(stage, f));
  }
  cpSync(join(root, 'media'), join(stage, 'media'), { recursive: true });
  mkdirSync(join(stage, 'dist'));
  for (const e of readdirSync(join(root, 'dist'), { withFileTypes: true })) {
    if (e.isFile() && shipsFromDist(e.name)) cpSync(join(root, 'dist', e.name), join(stage, 'dist', e.name));
  }
  return stage;
}

/** Entry names of a zip file (reads the central directory; no unzip needed). */
export function listZip(file) {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    const tailLen = Math.min(size, 65_557);
    const tail = Buffer.alloc(tailLen);
    readSync(fd, tail, 0, tailLen, size - tailLen);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error(`${file} is not a zip file`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    const cd = Buffer.alloc(cdSize);
    readSync(fd, cd, 0, cdSize, cdOffset);
    const names = [];
    for (let i = 0, p = 0; i < count; i++) {
      if (cd.readUInt32LE(p) !== 0x02014b50) throw new Error(`bad central directory entry ${i} in ${file}`);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      names.push(cd.toString('utf8', p + 46, p + 46 + nameLen));
      p += 46 + nameLen + extraLen + commentLen;
    }
    return names.sort();
  } finally {
    closeSync(fd);
  }
}

/**
 * Builds (production: minified, no source maps, unless `production: false`)
 * and packages. Returns the VSIX path and its size in bytes.
 */
export function packageVsix({ root = ROOT, out, build = true, production = true, quiet = false } = {}) {
  if (build) {
    const r = spawnSync(process.execPath, [join(root, 'esbuild.mjs'), ...(production ? ['--production'] : [])], {
      cwd: root,
      stdio: quiet ? 'pipe' : 'inherit',
    });
    if (r.status !== 0) throw new Error(`build failed${quiet ? `:\n${r.stderr}` : ''}`);
  }
  if (!existsSync(join(root, 'dist', 'extension.js'))) throw new Error('dist/extension.js is missing: build first');
  const target = resolve(root, out ?? vsixName(root));
  mkdirSync(dirname(target), { recursive: true });
  const stage = stageExtension(root);
  try {
    // --no-dependencies: everything is bundled into dist/, so no node_modules and no npm call (works offline).
    // --no-rewrite-relative-links: the README's screenshots (docs/images, written by the e2e suite) stay relative;
    // with no repository URL vsce would otherwise refuse to package.
    const r = vsce(root, stage, [
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--out',
      target,
    ]);
    if (r.status !== 0) throw new Error(`vsce package failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    if (!quiet) process.stdout.write(r.stdout);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return { vsix: target, bytes: statSync(target).size };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const outIdx = args.indexOf('--out');
  try {
    const started = Date.now();
    const { vsix, bytes } = packageVsix({
      out: outIdx >= 0 ? args[outIdx + 1] : undefined,
      build: !args.includes('--no-build'),
      production: !args.includes('--dev'),
    });
    console.log(`[package] ${vsix} (${(bytes / 1024).toFixed(0)} KB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`[package] install into VS Code: code --install-extension ${vsix}`);
  } catch (err) {
    console.error(`[package] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
