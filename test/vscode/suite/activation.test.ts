import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { COMMANDS } from '../../../src/host/commandTable';
import { api, extension, sim, waitFor } from './api';

describe('activation in the real extension host', () => {
  it('is installed under its id and not active before it is used (no eager activation)', () => {
    const ext = extension();
    assert.equal(ext.packageJSON.name, 'splitpoint');
    assert.deepEqual(ext.packageJSON.activationEvents, ['onWebviewPanel:splitpoint.review']);
    assert.equal(ext.isActive, false, 'nothing should have activated Splitpoint yet');
  });

  it('activates when the view is opened, quickly and without talking to the server', async () => {
    const requestsBefore = sim().stats.requests.length;
    const started = Date.now();
    await vscode.commands.executeCommand('splitpoint.view.focus');
    await waitFor('activation', () => extension().isActive, 15_000);
    const ms = Date.now() - started;
    assert.ok(ms < 10_000, `activation took ${ms} ms`);
    assert.equal(sim().stats.requests.length, requestsBefore, 'activation must not send chat requests');
  });

  it('registers every command of the command table', async () => {
    await extension().activate();
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = COMMANDS.map((c) => c.id).filter((id) => !all.has(id));
    assert.deepEqual(missing, [], `commands declared but not registered: ${missing.join(', ')}`);
  });

  it('declares in its manifest exactly the commands of the table', () => {
    const declared = (extension().packageJSON.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual(declared, COMMANDS.map((c) => c.id).sort());
  });

  it('exports the test API (receive, onDidPost, snapshot, settings)', async () => {
    const a = await api();
    // The host starts lazily, on the view's first `ready` (or a command).
    await a.receive({ type: 'ready' });
    const s = a.snapshot();
    assert.ok(s.session && typeof s.session.id === 'string', 'snapshot has a session');
    assert.ok(Array.isArray(s.messages));
  });
});
