import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, COMMAND_CATEGORY } from '../../src/host/commandTable';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));

describe('extension manifest', () => {
  it('declares exactly the commands of the command table', () => {
    const declared = pkg.contributes.commands.map((c: { command: string; title: string; category: string }) => ({
      id: c.command,
      title: c.title,
      category: c.category,
    }));
    assert.deepEqual(
      declared,
      COMMANDS.map((c) => ({ id: c.id, title: c.title, category: COMMAND_CATEGORY })),
    );
  });

  it('is a real manifest: engine, main, no eager activation, a webview view in its own container', () => {
    assert.equal(pkg.name, 'splitpoint');
    assert.equal(pkg.engines.vscode, '^1.100.0');
    assert.equal(pkg.main, 'dist/extension.js');
    assert.deepEqual(pkg.activationEvents, []);
    assert.equal(pkg.bin.splitpoint, 'dist/cli.js');
    const container = pkg.contributes.viewsContainers.activitybar[0];
    const view = pkg.contributes.views[container.id][0];
    assert.equal(view.type, 'webview');
  });

  it('allowlists the VSIX contents instead of excluding', () => {
    const ignore = readFileSync(join(__dirname, '..', '..', '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim());
    assert.equal(ignore.find((l) => l && !l.startsWith('#')), '**', 'first rule ignores everything');
    assert.ok(ignore.includes('!dist/**'));
    assert.ok(ignore.includes('dist/sim.js'), 'the simulator never ships');
  });
});
