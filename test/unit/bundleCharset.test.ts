/**
 * V8 keeps a script's source for as long as its functions live, and stores a string one byte per character only
 * when every character is at most U+00FF: one character above that and the whole source takes two bytes per
 * character. For the shipped extension bundle that is about 0.9 MB more of the extension host's heap, for good.
 * esbuild escapes such characters in string literals but writes regular expression literals as they are, so the
 * sources write them as \u escapes; this builds the Node bundles as `npm run package` does and checks.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

const root = join(__dirname, '..', '..');

async function productionBundle(entry: string): Promise<string> {
  const r = await esbuild.build({
    entryPoints: [join(root, entry)],
    bundle: true,
    minify: true,
    legalComments: 'none',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'js-tiktoken/ranks/cl100k_base'],
    write: false,
    logLevel: 'silent',
  });
  return r.outputFiles[0]!.text;
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

  for (const entry of ['src/host/extension.ts', 'src/node/countWorker.ts', 'src/cli/main.ts']) {
    it(`${entry}: no character above U+00FF`, async () => {
      const text = await productionBundle(entry);
      assert.ok(text.length > 5_000, `the bundle of ${entry} is ${text.length} characters`);
      assert.deepEqual(wideCharacters(text), []);
    });
  }

  it('the check sees a regular expression literal that esbuild leaves as written', async () => {
    const r = await esbuild.transform('export const re = /[✓✔]/; export const s = "✓";', { minify: true, format: 'cjs' });
    const wide = wideCharacters(r.code);
    assert.equal(wide.length, 2, `expected ✓ and ✔ from the regex only: ${wide.join(' | ')}`);
  });
});
