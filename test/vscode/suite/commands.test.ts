import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, newSession, suiteConfig, waitFor, commandWithArg } from './api';

describe('commands', () => {
  it('Open focuses the Splitpoint view', async () => {
    await vscode.commands.executeCommand('splitpoint.open');
  });

  it('Show Log opens the log channel without throwing', async () => {
    await vscode.commands.executeCommand('splitpoint.showLog');
  });

  it('New Session starts an empty session and keeps the old one listed', async () => {
    const a = await api();
    const before = a.snapshot().session.id;
    const id = await newSession(a);
    const s = a.snapshot();
    assert.notEqual(id, before);
    assert.equal(s.messages.filter((m) => m.role !== 'system').length, 0, 'a new session has no conversation');
    assert.ok(s.sessions.some((x) => x.id === id));
  });

  it('Import Session (given a file) loads a plain OpenAI messages array', async () => {
    const a = await api();
    await newSession(a);
    const file = join(suiteConfig().repoRoot, 'test', 'fixtures', 'example-session.json');
    const expected = (JSON.parse(readFileSync(file, 'utf8')) as unknown[]).length;
    await commandWithArg('splitpoint.importSession', vscode.Uri.file(file));
    const s = await waitFor('the imported messages', () => (a.snapshot().messages.length >= expected - 1 ? a.snapshot() : undefined));
    assert.ok(s.messages.length >= expected - 1, `imported ${s.messages.length} of ${expected}`);
    assert.ok(s.gauge.used > 1000, `gauge shows ${s.gauge.used} tokens`);
  });

  it('Export Session (given a file) writes the session as JSON', async () => {
    const a = await api();
    const out = join(mkdtempSync(join(tmpdir(), 'splitpoint-export-')), 'session.json');
    await commandWithArg('splitpoint.exportSession', vscode.Uri.file(out));
    await waitFor('the exported file', () => existsSync(out));
    const text = readFileSync(out, 'utf8');
    assert.ok(text.length > 100);
    const n = a.snapshot().messages.length;
    assert.ok(n > 0);
  });

  it('Select Model (given an id) sets splitpoint.model', async () => {
    await commandWithArg('splitpoint.selectModel', 'sim-model');
    await waitFor('splitpoint.model = sim-model', () => vscode.workspace.getConfiguration('splitpoint').get('model') === 'sim-model');
    await vscode.workspace.getConfiguration('splitpoint').update('model', undefined, vscode.ConfigurationTarget.Global);
  });
});
