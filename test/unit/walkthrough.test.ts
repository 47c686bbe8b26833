import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS } from '../../src/host/commandTable';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('walkthrough (contributes.walkthroughs)', () => {
  const w = pkg.contributes.walkthroughs?.[0];
  const ids = new Set<string>(COMMANDS.map((c) => c.id));

  it('walks from connecting to the server to a reviewed, adopted and undone compaction', () => {
    assert.ok(w, 'a walkthrough is declared');
    assert.deepEqual(
      w.steps.map((s: { id: string }) => s.id),
      ['connect', 'firstTask', 'compact', 'split', 'review'],
    );
  });

  it('links only to commands that exist, and its media files ship', () => {
    for (const s of w.steps) {
      for (const m of (s.description as string).matchAll(/\(command:([\w.]+)/g)) {
        const cmd = m[1]!;
        assert.ok(ids.has(cmd) || cmd.startsWith('workbench.'), `${s.id} links to unknown command ${cmd}`);
      }
      for (const e of s.completionEvents ?? []) {
        const [kind, arg] = (e as string).split(':');
        if (kind === 'onCommand') assert.ok(ids.has(arg!), `${s.id} completes on unknown command ${arg}`);
      }
      assert.ok(existsSync(join(root, s.media.markdown)), `${s.media.markdown} exists`);
    }
  });

  it('the connection step runs the check that reports model, window, tool calls and prefix caching', () => {
    const connect = w.steps[0];
    assert.match(connect.description, /command:splitpoint\.checkConnection/);
    assert.deepEqual(connect.completionEvents, ['onCommand:splitpoint.checkConnection']);
    const md = readFileSync(join(root, connect.media.markdown), 'utf8');
    for (const word of ['/v1/models', '/tokenize', 'max_model_len', 'tool-call parser', 'prefix caching'])
      assert.ok(md.toLowerCase().includes(word.toLowerCase()), word);
  });
});
