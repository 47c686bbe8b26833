import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { api, newSession, PostLog, sim, suiteConfig, waitFor } from './api';
import { exited, holdInChild } from '../../unit/helpers/sessionLockHolder';

/** The session's log under the window's workspace storage (the test API does not hand out paths). */
function logOf(id: string): string {
  const find = (dir: string, depth: number): string | undefined => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === `${id}.jsonl`) return p;
      if (depth > 0 && statSync(p).isDirectory()) {
        const found = find(p, depth - 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  const found = find(suiteConfig().userDataDir, 6);
  if (!found) throw new Error(`no log for session ${id} under ${suiteConfig().userDataDir}`);
  return found;
}

function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  const entry = join(suiteConfig().repoRoot, 'dist', 'cli.js');
  return new Promise((resolve) => {
    execFile(process.execPath, [entry, ...args], (err, _stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

describe('one writer per session log (the editor and the CLI)', function () {
  this.timeout(60_000);

  it("refuses the CLI's compact --adopt on the session the editor has open, and leaves the log as it was", async () => {
    const a = await api();
    const id = await newSession(a);
    await a.receive({ type: 'send', text: 'Please remember the release codename' });
    await waitFor('the agent to stop', () => (a.snapshot().messages.length > 2 && !a.snapshot().agent.running ? true : undefined), 30_000);
    const log = logOf(id);
    const lock = JSON.parse(readFileSync(`${log}.lock`, 'utf8')) as { pid: number; by: string };
    assert.deepEqual([lock.pid, lock.by], [process.pid, 'VS Code']);
    const before = readFileSync(log, 'utf8');
    const r = await cli(['compact', '--session', log, '--endpoint', sim().url, '--split', '2', '--adopt']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`open for writing in VS Code \\(process ${process.pid},`));
    assert.equal(readFileSync(log, 'utf8'), before);
  });

  it('opens two sessions picked at once one after the other: the session left behind is closed and its lock freed', async () => {
    const a = await api();
    const first = await newSession(a);
    const second = await newSession(a);
    const before = await newSession(a);
    await Promise.all([a.receive({ type: 'switch-session', sessionId: first }), a.receive({ type: 'switch-session', sessionId: second })]);
    const current = await waitFor('a picked session to be open', () => {
      const id = a.snapshot().session.id;
      return id === first || id === second ? id : undefined;
    });
    const left = current === first ? second : first;
    assert.equal(existsSync(`${logOf(current)}.lock`), true, 'the open session holds its lock');
    assert.equal(existsSync(`${logOf(left)}.lock`), false, 'the one opened and left is closed');
    assert.equal(existsSync(`${logOf(before)}.lock`), false, 'the one open before is closed');
  });

  it('does not switch to a session another process is writing, says why, and keeps the current one; switches once it is free', async () => {
    const a = await api();
    const held = await newSession(a);
    const current = await newSession(a);
    const other = await holdInChild(logOf(held), suiteConfig().repoRoot);
    const posts = new PostLog(a);
    try {
      await a.receive({ type: 'switch-session', sessionId: held });
      await posts.waitFor('notice', (m) => m.level === 'error' && m.text.includes(held));
      assert.equal(a.snapshot().session.id, current);
      other.stdin!.end();
      await exited(other);
      await a.receive({ type: 'switch-session', sessionId: held });
      await waitFor('the freed session to open', () => (a.snapshot().session.id === held ? true : undefined));
    } finally {
      posts.dispose();
      other.kill('SIGKILL');
    }
  });
});
