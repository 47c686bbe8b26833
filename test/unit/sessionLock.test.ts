import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
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

/** The boot id and a process's start time, as the lock records them on Linux. */
function identityOf(pid: number): { boot: string; start: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
  return { boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), start };
}

function writeLock(path: string, record: Record<string, unknown>): void {
  writeFileSync(`${path}.lock`, JSON.stringify({ host: hostname(), by: 'VS Code', since: Date.now(), token: 't-other', ...record }) + '\n');
}

describe('session writer lock (two processes never write one log)', function () {
  this.timeout(30_000);
  const storage = new NodeFileStorage('splitpoint compact --adopt');

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

  it('takes over a lock from another boot, one whose process id was given to another process since, and an empty one', async () => {
    const { path } = await newLog();
    const init = identityOf(1);
    // pid 1 is always alive: only the boot id or the start time says this holder is gone.
    writeLock(path, { pid: 1, boot: 'an-earlier-boot', start: init.start });
    await (await SessionStore.open({ storage }, path)).close();
    writeLock(path, { pid: 1, boot: init.boot, start: String(Number(init.start) + 1) });
    await (await SessionStore.open({ storage }, path)).close();
    writeFileSync(`${path}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    await (await SessionStore.open({ storage }, path)).close();
    assert.equal(existsSync(`${path}.lock`), false);
  });

  it('holds the lock of a live holder whatever the wall clock says, and one from another machine', async () => {
    const { path, text } = await newLog();
    // Taken, by the wall clock, long before this boot (a VM's clock stepped forward since): the holder still runs.
    writeLock(path, { pid: 1, since: Date.now() - 30 * 86_400_000, ...identityOf(1) });
    await assert.rejects(SessionStore.open({ storage }, path), /open for writing in VS Code \(process 1, since /);
    // An older lock without the identity: the process id alone decides.
    writeLock(path, { pid: 1 });
    await assert.rejects(SessionStore.open({ storage }, path), SessionLockedError);
    writeLock(path, { pid: 999_999_999, host: 'other-box' });
    await assert.rejects(SessionStore.open({ storage }, path), /\(process 999999999 on other-box, since .*delete .*s\.jsonl\.lock/);
    assert.equal(readFileSync(path, 'utf8'), text);
  });

  it('makes two imports to one path: the first writes the log, the second is refused and does not replace it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-lock-'));
    const path = join(dir, 'imported.jsonl');
    const raw = (n: number) => [{ role: 'user', content: `import ${n}` }];
    const results = await Promise.allSettled([
      SessionStore.importArray({ storage }, path, raw(1)),
      SessionStore.importArray({ storage: new NodeFileStorage() }, path, raw(2)),
    ]);
    const ok = results.filter((r): r is PromiseFulfilledResult<SessionStore> => r.status === 'fulfilled');
    assert.equal(ok.length, 1);
    assert.match(
      String((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason),
      /Refusing to import over existing file/,
    );
    const content = ok[0]!.value.snapshot.messages[0]!.content;
    await ok[0]!.value.close();
    const reopened = await SessionStore.open({ storage }, path, { readOnly: true });
    assert.equal(reopened.snapshot.messages[0]!.content, content, 'the log on disk is the one the winner opened');
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
