import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');
const MAX_LINES = 400;
const MAX_LINE_CHARS = 160;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'webview'))].map((f) => ({
  path: relative(root, f).split('\\').join('/'),
  lines: readFileSync(f, 'utf8').split('\n'),
}));
const lineCount = (lines: string[]) => (lines.at(-1) === '' ? lines.length - 1 : lines.length);

describe('source files have one job: size limits', () => {
  it('finds the sources (a walk that silently found nothing would pass)', () => {
    assert.ok(files.length > 100, `only ${files.length} files`);
    assert.ok(files.some((f) => f.path === 'src/host/host.ts'));
  });

  it(`no file in src/ or webview/ is over ${MAX_LINES} lines`, () => {
    const over = files.filter((f) => lineCount(f.lines) > MAX_LINES).map((f) => `${f.path}: ${lineCount(f.lines)}`);
    assert.deepEqual(over, []);
  });

  it(`no line in src/ or webview/ is over ${MAX_LINE_CHARS} characters`, () => {
    const long = files.flatMap((f) => f.lines.flatMap((l, i) => (l.length > MAX_LINE_CHARS ? [`${f.path}:${i + 1} (${l.length})`] : [])));
    assert.deepEqual(long, []);
  });
});
