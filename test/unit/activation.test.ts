import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS } from '../../src/host/commandTable';
import { installFakeVscode } from './helpers/fakeVscode';

const bundle = join(__dirname, '..', '..', 'dist', 'extension.js');
const LOADS = Symbol.for('splitpoint.tokenizerLoads');

describe('activation of the built extension bundle', () => {
  before(function () {
    if (!existsSync(bundle)) throw new Error('dist/extension.js is missing: run "npm run build" first (npm test does)');
  });

  it('registers the view and every command without loading the tokenizer', () => {
    const { fake, uninstall } = installFakeVscode();
    const g = globalThis as Record<symbol, number | undefined>;
    const loadsBefore = g[LOADS] ?? 0;
    try {
      delete require.cache[bundle];
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const ext = require(bundle) as { activate(ctx: unknown): void };
      const started = process.hrtime.bigint();
      ext.activate({ subscriptions: [], extensionUri: { path: '/ext', fsPath: '/ext' } });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      assert.deepEqual(fake.registeredViews, ['splitpoint.view']);
      assert.deepEqual(fake.registeredSerializers, ['splitpoint.review']);
      assert.deepEqual([...fake.registeredCommands].sort(), COMMANDS.map((c) => c.id).sort());
      assert.equal(g[LOADS] ?? 0, loadsBefore, 'activation must not load the tokenizer');
      assert.ok(ms < 1000, `activation took ${ms} ms`);
    } finally {
      uninstall();
    }
  });

  it('exports the test API only outside production', () => {
    const { uninstall } = installFakeVscode();
    try {
      delete require.cache[bundle];
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const ext = require(bundle) as { activate(ctx: unknown): unknown };
      const ctx = (mode: number) => ({ subscriptions: [], extensionUri: { path: '/ext', fsPath: '/ext' }, extensionMode: mode });
      assert.equal(ext.activate(ctx(1)), undefined, 'installed from a VSIX, nothing is exported');
      const api = ext.activate(ctx(3)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(api).sort(), ['onDidPost', 'receive', 'settings', 'snapshot']);
    } finally {
      uninstall();
    }
  });
});
