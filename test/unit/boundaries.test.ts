import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (let m = re.exec(src); m; m = re.exec(src)) out.push((m[1] ?? m[2] ?? m[3])!);
  return out;
}

describe('layer boundaries', () => {
  for (const layer of ['core', 'protocol']) {
    it(`src/${layer} never imports vscode, Node-only adapters, the host, the CLI or the client`, () => {
      const offenders: string[] = [];
      for (const f of tsFiles(join(root, 'src', layer))) {
        for (const spec of imports(f)) {
          const bad =
            spec === 'vscode' ||
            /(^|\/)(host|cli|llm|node)(\/|$)/.test(spec.replace(/^(\.\.\/)+/, '')) ||
            (layer === 'core' && /^node:(fs|child_process|net|http)/.test(spec));
          if (bad) offenders.push(`${relative(root, f)} imports ${spec}`);
        }
      }
      assert.deepEqual(offenders, []);
    });
  }

  it('the boundary check itself catches a vscode import', () => {
    // Guard against a regex that silently matches nothing.
    const sample = join(root, 'src', 'host', 'extension.ts');
    assert.ok(imports(sample).includes('vscode'));
  });

  it('the webview only imports the protocol and browser-safe modules', () => {
    const offenders = tsFiles(join(root, 'webview'))
      .flatMap((f) => imports(f).map((s) => ({ f, s })))
      .filter(({ s }) => s === 'vscode' || /src\/(core|host|cli|llm|node)\//.test(s) || s.startsWith('node:'))
      .map(({ f, s }) => `${relative(root, f)} imports ${s}`);
    assert.deepEqual(offenders, []);
  });
});
