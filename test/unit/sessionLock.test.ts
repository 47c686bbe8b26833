import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { SessionLockedError, SessionStateError } from '../../src/core/session/errors';
import { SessionStore } from '../../src/core/session/sessionStore';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { exited, holdInChild } from './helpers/sessionLockHolder';

async function newLog(): Promise<{ dir: string; path: string; text: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-lock-'));
  const path = join(dir, 's.jsonl');
  const store = await SessionStore.create({ storage: new NodeFileStorage() }, path, 'locked');
  await store.append({ role: 'user', content: 'hello' });
  await store.close();
  return { dir, path, text: readFileSync(path, 'utf8') };
}

function writeLock(path: string, record: Record<string, unknown>): void {
  writeFileSync(`${path}.lock`, JSON.stringify({ host: hostname(), by: 'VS Code', since: Date.now(), token: 't-other', ...record }) + '\n');
}

describe('session writer lock (two processes never write one log)', function () {
  this.timeout(30_000);
  const storage = new NodeFileStorage(undefined, 'splitpoint compact --adopt');

  it('is held from opening for writing to close, and freed by close', async () => {
    const { path } = await newLog();
    const store = await SessionStore.open({ storage }, path);
    const lock = JSON.parse(readFileSync(`${path}.lock`, 'utf8')) as { pid: number; by: string };
    assert.equal(lock.pid, process.pid);
    assert.equal(lock.by, 'splitpoint compact --adopt');
    await store.close();
    assert.equal(existsSync(`${path}.lock`), false);
    const readOnly = await SessionStore.open({ storage }, path, { readOnly: true });
    assert.equal(existsSync(`${path}.lock`), false, 'reading takes no lock');
    assert.equal(readOnly.snapshot.messages.length, 1);
  });

  it('is taken for a new session in a folder not made yet (the folder is made)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'sp-lock-')), 'sessions', 'new.jsonl');
    const store = await SessionStore.create({ storage }, path);
    assert.equal(existsSync(`${path}.lock`), true);
    await store.close();
    assert.equal(existsSync(`${path}.lock`), false);
  });

  it('refuses a writer while another process holds the session, names it, and leaves the log byte for byte', async () => {
    const { dir, path, text } = await newLog();
    const child = await holdInChild(path);
    try {
      await assert.rejects(
        SessionStore.open({ storage }, path),
        (e: unknown) =>
          e instanceof SessionLockedError &&
          e.message.includes(`open for writing in VS Code (process ${child.pid},`) &&
          e.message.includes(`delete ${path}.lock`),
      );
      assert.equal(readFileSync(path, 'utf8'), text);
      assert.deepEqual(readdirSync(dir).sort(), ['s.jsonl', 's.jsonl.lock'], 'no backup, no temp file');
      // Reading is still allowed.
      const reader = await SessionStore.open({ storage }, path, { readOnly: true });
      assert.equal(reader.snapshot.messages.length, 1);
      // The holder closes the session: the lock is gone and the session opens for writing here.
      child.stdin!.end();
      await exited(child);
      assert.equal(existsSync(`${path}.lock`), false);
      const store = await SessionStore.open({ storage }, path);
      await store.append({ role: 'user', content: 'after' });
      await store.close();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('takes over the lock of a holder that was killed', async () => {
    const { path } = await newLog();
    const child = await holdInChild(path);
    child.kill('SIGKILL');
    await exited(child);
    assert.equal(existsSync(`${path}.lock`), true, 'a killed holder leaves its lock');
    const store = await SessionStore.open({ storage }, path);
    assert.equal((JSON.parse(readFileSync(`${path}.lock`, 'utf8')) as { pid: number }).pid, process.pid);
    await store.close();
  });

  it('takes over a lock from before the machine booted, and an empty lock file left by a crash', async () => {
    const { path } = await newLog();
    // pid 1 is always alive: only the boot time says this holder is gone.
    writeLock(path, { pid: 1, since: Date.now() - uptime() * 1000 - 3_600_000 });
    await (await SessionStore.open({ storage }, path)).close();
    writeFileSync(`${path}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    await (await SessionStore.open({ storage }, path)).close();
    assert.equal(existsSync(`${path}.lock`), false);
  });

  it('holds a lock of a live process since boot, and one from another machine', async () => {
    const { path, text } = await newLog();
    writeLock(path, { pid: 1 });
    await assert.rejects(SessionStore.open({ storage }, path), /open for writing in VS Code \(process 1, since /);
    writeLock(path, { pid: 999_999_999, host: 'other-box' });
    await assert.rejects(SessionStore.open({ storage }, path), /\(process 999999999 on other-box, since .*delete .*s\.jsonl\.lock/);
    assert.equal(readFileSync(path, 'utf8'), text);
  });

  it('is counted within one process, and a release never removes a lock someone else took over', async () => {
    const { path } = await newLog();
    const a = await SessionStore.open({ storage }, path);
    const b = await SessionStore.open({ storage }, path);
    await a.close();
    assert.equal(existsSync(`${path}.lock`), true, 'still held by the second store');
    // Deleted by hand and taken by another program meanwhile: ours is gone, theirs stays.
    writeLock(path, { pid: 1, token: 'theirs' });
    await b.close();
    assert.match(readFileSync(`${path}.lock`, 'utf8'), /"theirs"/);
  });

  it('lets the changes queued before close finish and refuses any after it', async () => {
    const { path } = await newLog();
    const store = await SessionStore.open({ storage }, path);
    const queued = store.append({ role: 'user', content: 'queued before close' });
    const closing = store.close();
    await assert.rejects(store.append({ role: 'user', content: 'after close' }), SessionStateError);
    await queued;
    await closing;
    const reopened = await SessionStore.open({ storage }, path, { readOnly: true });
    assert.deepEqual(
      reopened.snapshot.messages.map((m) => m.content),
      ['hello', 'queued before close'],
    );
  });

  it('frees the lock when the store cannot be opened (a damaged log)', async () => {
    const { path, text } = await newLog();
    writeFileSync(path, text + 'garbage\n');
    await assert.rejects(SessionStore.open({ storage }, path), /damaged at line 3/);
    assert.equal(existsSync(`${path}.lock`), false);
  });
});
