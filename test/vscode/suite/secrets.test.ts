import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulator, type SimHandle } from '../../sim';
import { api, newSession, PostLog, setSetting, sim, suiteConfig, waitFor, commandWithArg } from './api';

const KEY = 'sk-splitpoint-secret-7c1e';

/** Every file under dir whose text contains needle. */
function filesContaining(dir: string, needle: string, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) filesContaining(p, needle, out);
    // Sockets and other special files cannot be read; the key could only be in a regular file.
    else if (st.isFile() && st.size < 20_000_000 && readFileSync(p).includes(needle)) out.push(p);
  }
  return out;
}

describe('API key in SecretStorage', () => {
  let locked: SimHandle;
  before(async () => {
    locked = await startSimulator({ port: 0, timeScale: 0, apiKey: KEY });
  });
  after(async () => {
    await commandWithArg('splitpoint.setApiKey', '').catch(() => undefined);
    await setSetting('splitpoint.endpoint', sim().url);
    await locked.close();
  });

  it('Set API Key (given the key) stores it and requests carry it as a Bearer token', async () => {
    const a = await api();
    await setSetting('splitpoint.endpoint', locked.url);
    await commandWithArg('splitpoint.setApiKey', KEY);
    await newSession(a);
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'send', text: 'hello with a key' });
      await waitFor(
        'a successful chat request',
        () => locked.stats.requests.some((r) => r.status === 'done' && (r.httpStatus === undefined || r.httpStatus === 200)),
        20_000,
      );
      await log.waitFor('message-added', (m) => m.message.role === 'assistant');
    } finally {
      log.dispose();
    }
  });

  it('keeps the key out of settings, session files, logs on disk and the webview snapshot', async () => {
    const a = await api();
    assert.ok(!JSON.stringify(a.snapshot()).includes(KEY), 'snapshot contains the key');
    assert.ok(!JSON.stringify(vscode.workspace.getConfiguration('splitpoint')).includes(KEY));
    const leaks = filesContaining(suiteConfig().userDataDir, KEY);
    assert.deepEqual(leaks, [], `the key is in plain text in: ${leaks.join(', ')}`);
  });

  it('without the key the server refuses and the user is told', async () => {
    const a = await api();
    await commandWithArg('splitpoint.setApiKey', '');
    await newSession(a);
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'send', text: 'hello without a key' });
      const n = await log.waitFor('notice', (m) => m.level === 'error');
      assert.ok(n.text.length > 0);
    } finally {
      log.dispose();
    }
  });
});
