/**
 * `npm start` and the VS Code suites run Splitpoint in code-server, a remote window. There VS Code takes a
 * machine-scoped setting (the endpoints) from the remote settings only, once it knows the setting's scope; from the
 * user settings it is dropped. An e2e reload read the default endpoint (localhost:8000) because the endpoint was in the
 * user settings alone. The harness writes such settings to the remote (Machine) settings too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineScoped, writeUserSettings } from '../vscode/harness.mjs';

describe('settings for code-server: machine-scoped ones go to the remote settings', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'sp-settings-'));
    dirs.push(d);
    return d;
  };
  const read = (d: string, scope: 'User' | 'Machine') => JSON.parse(readFileSync(join(d, scope, 'settings.json'), 'utf8'));

  it('the endpoint is in both files; a window-scoped setting only in the user settings', () => {
    const d = fresh();
    writeUserSettings(d, { 'splitpoint.endpoint': 'http://127.0.0.1:9/v1', 'splitpoint.compaction.verbosity': 'concise' });
    assert.equal(read(d, 'User')['splitpoint.endpoint'], 'http://127.0.0.1:9/v1');
    assert.deepEqual(read(d, 'Machine'), { 'splitpoint.endpoint': 'http://127.0.0.1:9/v1' });
  });

  it('what npm start wrote there before stays, the endpoint is this run’s', () => {
    const d = fresh();
    mkdirSync(join(d, 'Machine'));
    writeFileSync(
      join(d, 'Machine', 'settings.json'),
      JSON.stringify({ 'splitpoint.endpoint': 'http://old/v1', 'splitpoint.tls.caFile': '/ca.pem' }),
    );
    writeUserSettings(d, { 'splitpoint.endpoint': 'http://new/v1' });
    assert.deepEqual(read(d, 'Machine'), { 'splitpoint.endpoint': 'http://new/v1', 'splitpoint.tls.caFile': '/ca.pem' });
  });

  it("machine scope is read from the manifest: every endpoint setting, none of the compaction's knobs", () => {
    const picked = machineScoped({
      'splitpoint.endpoint': 1,
      'splitpoint.compaction.endpoint': 1,
      'splitpoint.judge.endpoint': 1,
      'splitpoint.compaction.endpoints': 1,
      'splitpoint.compaction.verbosity': 1,
      'splitpoint.compaction.lo': 1,
      'workbench.startupEditor': 1,
    });
    assert.deepEqual(Object.keys(picked).sort(), [
      'splitpoint.compaction.endpoint',
      'splitpoint.compaction.endpoints',
      'splitpoint.endpoint',
      'splitpoint.judge.endpoint',
    ]);
  });
});
