import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { listZip, packageVsix } from '../../scripts/package.mjs';

const root = join(__dirname, '..', '..');
const MAX_BYTES = 5 * 1024 * 1024;

/** What a VSIX may hold: vsce's two metadata files, then only these under extension/. */
function allowed(entry: string): boolean {
  if (entry === '[Content_Types].xml' || entry === 'extension.vsixmanifest') return true;
  if (!entry.startsWith('extension/')) return false;
  const f = entry.slice('extension/'.length);
  if (['package.json', 'readme.md', 'README.md', 'LICENSE.txt', 'LICENSE'].includes(f)) return true;
  if (f.startsWith('media/')) return true;
  if (f.startsWith('dist/')) return !f.endsWith('.map') && f !== 'dist/sim.js';
  return false;
}

describe('the VSIX (npm run package)', function () {
  this.timeout(60_000);
  let dir: string;
  let vsix: string;
  let bytes: number;
  let entries: string[];

  before(function () {
    if (!existsSync(join(root, 'dist', 'extension.js'))) throw new Error('dist/ is missing: run "npm run build" first (npm test does)');
    dir = mkdtempSync(join(tmpdir(), 'splitpoint-vsix-test-'));
    // Packages the current build (npm test has just built it) rather than rebuilding for production.
    ({ vsix, bytes } = packageVsix({ root, out: join(dir, 'splitpoint.vsix'), build: false, quiet: true }));
    entries = listZip(vsix);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('contains only dist/ (no simulator, no source maps), media/, package.json, README and LICENSE', () => {
    const extra = entries.filter((e) => !allowed(e));
    assert.deepEqual(extra, [], `unexpected files in the VSIX: ${extra.join(', ')}`);
  });

  it('contains everything the extension needs to run', () => {
    // tokenizer-ranks.js is loaded lazily by extension.js on first use; without it token counting fails.
    for (const f of [
      'extension/package.json',
      'extension/dist/extension.js',
      'extension/dist/webview.js',
      'extension/dist/review.js',
      'extension/dist/tokenizer-ranks.js',
      'extension/dist/countWorker.js',
      'extension/readme.md',
      'extension/LICENSE.txt',
    ]) {
      assert.ok(entries.includes(f), `${f} is missing from the VSIX; it has ${entries.join(', ')}`);
    }
    for (const m of readdirSync(join(root, 'media'), { recursive: true, withFileTypes: true })) {
      if (!m.isFile()) continue;
      const rel = relative(root, join(m.parentPath, m.name)).split(sep).join('/');
      assert.ok(entries.includes(`extension/${rel}`), `${rel} is missing`);
    }
  });

  it('never ships the simulator or a source map', () => {
    assert.ok(!entries.some((e) => e.endsWith('/sim.js') || e.endsWith('.map')));
  });

  it(`is at most 5 MB`, () => {
    assert.ok(bytes <= MAX_BYTES, `${(bytes / 1024 / 1024).toFixed(2)} MB`);
  });
});
