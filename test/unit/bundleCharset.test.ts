/**
 * V8 keeps a script's source for as long as its functions live, and stores a string one byte per character only
 * when every character is at most U+00FF: one character above that and the whole source takes two bytes per
 * character. For the shipped extension bundle that is about 0.9 MB more of the extension host's heap, for good.
 * esbuild escapes such characters in string literals but writes regular expression literals as they are, so the
 * sources write them as \u escapes; this builds the Node bundles from the targets esbuild.mjs builds
 * (scripts/bundles.mjs), with the production settings `npm run package` uses, and checks.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { bundleTargets } from '../../scripts/bundles.mjs';

const root = join(__dirname, '..', '..');

/** The production bundle `npm run package` ships for this output file, built in memory. */
async function productionBundle(outfile: string): Promise<string> {
  const target = bundleTargets({ production: true }).find((t) => t.outfile === outfile);
  assert.ok(target, `no bundle target writes ${outfile}`);
  const r = await esbuild.build({ ...target, absWorkingDir: root, write: false, logLevel: 'silent' });
  const js = r.outputFiles.find((f) => f.path.endsWith('.js'));
  assert.ok(js, `esbuild wrote no .js for ${outfile}`);
  return js.text;
}

/** Each character above U+00FF with a little context, so that a failure names the source to fix. */
function wideCharacters(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length && out.length < 10; i++)
    if (text.charCodeAt(i) > 0xff) out.push(`${JSON.stringify(text[i])} in …${text.slice(Math.max(0, i - 40), i + 10)}…`);
  return out;
}

describe('the shipped Node bundles are one byte per character in V8', function () {
  this.timeout(60_000);

  for (const outfile of ['dist/extension.js', 'dist/countWorker.js', 'dist/cli.js']) {
    it(`${outfile}: no character above U+00FF`, async () => {
      const text = await productionBundle(outfile);
      assert.ok(text.length > 5_000, `${outfile} is ${text.length} characters`);
      assert.deepEqual(wideCharacters(text), []);
    });
  }

  it('the check sees a regular expression literal that esbuild leaves as written', async () => {
    const r = await esbuild.transform('export const re = /[✓✔]/; export const s = "✓";', { minify: true, format: 'cjs' });
    const wide = wideCharacters(r.code);
    assert.equal(wide.length, 2, `expected ✓ and ✔ from the regex only: ${wide.join(' | ')}`);
  });
});
