import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api, setSetting, sim, waitFor } from './api';

describe('settings validation', () => {
  afterEach(async () => {
    for (const k of ['compaction.hi', 'compaction.lo', 'compaction.blockTokens', 'compaction.strategy']) {
      await vscode.workspace.getConfiguration('splitpoint').update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await setSetting('splitpoint.endpoint', sim().url);
  });

  it('reads the endpoint the runner configured, with no problems', async () => {
    const a = await api();
    const r = a.settings();
    assert.equal(r.settings.endpoint, sim().url);
    assert.deepEqual(r.problems, []);
  });

  it('picks up a changed setting without a reload', async () => {
    const a = await api();
    await setSetting('splitpoint.compaction.strategy', 'recent-turns');
    await waitFor('strategy = recent-turns', () => a.settings().settings.strategy === 'recent-turns');
    await waitFor('the snapshot to follow', () => a.snapshot().split.strategy === 'recent-turns');
  });

  it('reports a bad threshold by its setting id and falls back to the defaults', async () => {
    const a = await api();
    await setSetting('splitpoint.compaction.hi', 0.3); // below lo = 0.4
    const r = await waitFor('a problem report', () => (a.settings().problems.length > 0 ? a.settings() : undefined));
    assert.ok(
      r.problems.some((p) => p.includes('splitpoint.compaction')),
      r.problems.join('\n'),
    );
    assert.equal(r.settings.thresholds.hi, 0.75);
  });

  it('reports a bad endpoint and a bad number clearly', async () => {
    const a = await api();
    await setSetting('splitpoint.endpoint', 'not a url');
    await setSetting('splitpoint.compaction.blockTokens', -5);
    const r = await waitFor('two problems', () => (a.settings().problems.length >= 2 ? a.settings() : undefined));
    assert.ok(
      r.problems.some((p) => p.includes('splitpoint.endpoint')),
      r.problems.join('\n'),
    );
    assert.ok(
      r.problems.some((p) => p.includes('splitpoint.compaction.blockTokens')),
      r.problems.join('\n'),
    );
    // Falls back to the manifest's default (0 = the planner chooses the block size).
    const manifestDefault = vscode.workspace.getConfiguration('splitpoint').inspect<number>('compaction.blockTokens')?.defaultValue;
    assert.equal(typeof manifestDefault, 'number');
    assert.equal(r.settings.blockTokens, manifestDefault);
  });

  it('never stores an API key in settings', () => {
    const inspect = vscode.workspace.getConfiguration('splitpoint').inspect('apiKey');
    assert.equal(inspect?.defaultValue, undefined, 'there is no splitpoint.apiKey setting');
  });
});
