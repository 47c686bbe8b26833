import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, COMMAND_CATEGORY, CONTEXT_KEYS, manifestCommands, manifestViewTitleMenu } from '../../src/host/commandTable';
import { SETTING_DEFS, SETTING_SECTION } from '../../src/core/config/settings';

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
    // Icons and enablement too, so a button can't lose its icon or its when-clause silently.
    assert.deepEqual(pkg.contributes.commands, manifestCommands());
  });

  it('has the ten commands the issue asks for, all under splitpoint.*', () => {
    const titles = COMMANDS.map((c) => c.title);
    for (const t of [
      'Open',
      'New Session',
      'Compact Now',
      'Compact with Focus…',
      'Undo Last Compaction',
      'Set API Key',
      'Select Model',
      'Export Session',
      'Import Session',
      'Show Log',
    ]) {
      assert.ok(titles.includes(t as never), `missing command "${t}"`);
    }
    assert.equal(new Set(COMMANDS.map((c) => c.id)).size, COMMANDS.length, 'ids are unique');
    assert.ok(COMMANDS.every((c) => /^splitpoint\.[a-z][A-Za-z]+$/.test(c.id)));
  });

  it('puts the view title buttons of the table on the Splitpoint view only', () => {
    assert.deepEqual(pkg.contributes.menus['view/title'], manifestViewTitleMenu());
    for (const m of pkg.contributes.menus['view/title']) assert.equal(m.when, 'view == splitpoint.view');
    const nav = pkg.contributes.menus['view/title'].filter((m: { group: string }) => m.group.startsWith('navigation'));
    for (const m of nav) {
      const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === m.command);
      assert.ok(cmd.icon, `${m.command} is an icon button and needs an icon`);
    }
  });

  it('uses only context keys the host sets in enablement clauses', () => {
    const known = new Set<string>(Object.values(CONTEXT_KEYS));
    for (const c of pkg.contributes.commands) {
      if (!c.enablement) continue;
      for (const key of String(c.enablement).match(/splitpoint\.[A-Za-z]+/g) ?? [])
        assert.ok(known.has(key), `${c.command}: unknown context key ${key}`);
    }
  });

  it('declares every setting the reader knows, with the same default, and nothing else', () => {
    const props = pkg.contributes.configuration.properties as Record<string, { default: unknown; type: string | string[] }>;
    const expected = Object.keys(SETTING_DEFS)
      .map((k) => `${SETTING_SECTION}.${k}`)
      .sort();
    assert.deepEqual(Object.keys(props).sort(), expected);
    for (const [k, def] of Object.entries(SETTING_DEFS)) {
      assert.deepEqual(props[`${SETTING_SECTION}.${k}`]!.default, def.default, `default of ${k}`);
    }
    assert.ok(
      !Object.keys(props).some((k) => /key|secret|token$/i.test(k) && !/Tokens$/.test(k)),
      'no API key in settings: it lives in SecretStorage',
    );
  });

  it('supports untrusted workspaces in a limited way, with a reason, and no virtual workspaces', () => {
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.match(pkg.capabilities.untrustedWorkspaces.description, /edit|command/i);
    for (const k of pkg.capabilities.untrustedWorkspaces.restrictedConfigurations)
      assert.ok(k in pkg.contributes.configuration.properties, k);
    assert.equal(pkg.capabilities.virtualWorkspaces.supported, false);
  });

  it('lets no workspace, trusted or not, choose where the API key goes or what runs without asking', () => {
    // VS Code ignores a machine-scoped setting in a workspace's settings: a cloned repo's .vscode/settings.json cannot
    // send the key to its own server, allowlist `sh`, turn the sandbox off or pass itself more of the environment.
    const props = pkg.contributes.configuration.properties as Record<string, { scope?: string }>;
    const decisive = Object.keys(props).filter((k) =>
      /endpoints?$|caFile$|^splitpoint\.tools\.(commandAllowlist|commandEnv|sandbox|allowNetwork)$/.test(k),
    );
    assert.equal(decisive.length, 9, decisive.join(', '));
    for (const k of decisive) assert.equal(props[k]!.scope, 'machine', k);
  });

  it('is a real manifest: engine, main, no eager activation, a webview view in its own container', () => {
    assert.equal(pkg.name, 'splitpoint');
    assert.equal(pkg.engines.vscode, '^1.100.0');
    assert.equal(pkg.main, 'dist/extension.js');
    // Only the review editor's restore after a reload (its serializer must be registered): nothing eager.
    assert.deepEqual(pkg.activationEvents, ['onWebviewPanel:splitpoint.review']);
    assert.equal(pkg.bin.splitpoint, 'dist/cli.js');
    const container = pkg.contributes.viewsContainers.activitybar[0];
    const view = pkg.contributes.views[container.id][0];
    assert.equal(view.type, 'webview');
    assert.equal(view.id, 'splitpoint.view');
  });

  it('allowlists the VSIX contents instead of excluding', () => {
    const ignore = readFileSync(join(__dirname, '..', '..', '.vscodeignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    const rules = ignore.filter((l) => l && !l.startsWith('#'));
    assert.equal(rules[0], '**', 'first rule ignores everything');
    // vsce lets any "!" rule win over every ignore rule, so dist/ must be let in file by file.
    assert.ok(!rules.includes('!dist/**'), 'a dist/** rule would ship the simulator and source maps');
    assert.deepEqual(rules.filter((l) => l.startsWith('!dist/')).sort(), [
      '!dist/cli.js',
      '!dist/countWorker.js',
      '!dist/extension.js',
      '!dist/review.js',
      '!dist/tokenizer-ranks.js',
      '!dist/webview.js',
    ]);
  });
});
