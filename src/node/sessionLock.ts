import { randomUUID } from 'node:crypto';
import { promises as fs, linkSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { SessionLockedError } from '../core/session/errors';
import type { SessionLock } from '../core/session/storage';

/**
 * A session's writer lock: a file next to the log, created exclusively, that
 * names the process holding it. Whether its holder is gone is decided on this
 * machine by the process id, and on Linux also by the boot and the process's
 * start time (ids are reused after a crash or a reboot), so a crashed holder
 * never blocks the session and nothing has to refresh the lock while it is
 * held. (proper-lockfile decides by the lock's age instead, which needs a timer
 * touching the file every few seconds in the extension host and calls a lock
 * compromised after a laptop's sleep.) The wall clock decides nothing: it steps.
 */
interface LockRecord {
  pid: number;
  host: string;
  by: string;
  since: number;
  token: string;
  /** Linux: the kernel's boot id, and the holder's start time in clock ticks since that boot. */
  boot?: string;
  start?: string;
}

/** Locks this process holds, by lock file: taken again, a lock is counted, and freed when the count is back at 0. */
const held = new Map<string, { count: number; token: string }>();

/** Absolute, so one process opening a log by two spellings of its path counts one lock, not two. */
function lockPathOf(path: string): string {
  return `${resolve(path)}.lock`;
}

const ATTEMPTS = 6;

export async function acquireSessionLock(path: string, by: string): Promise<SessionLock> {
  const lockPath = lockPathOf(path);
  const mine = held.get(lockPath);
  if (mine) {
    mine.count++;
    return handle(lockPath, mine.token);
  }
  const record: LockRecord = {
    pid: process.pid,
    host: hostname(),
    by,
    since: Date.now(),
    token: randomUUID(),
    ...processIdentity(process.pid),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.writeFile(lockPath, JSON.stringify(record) + '\n', { flag: 'wx' });
      held.set(lockPath, { count: 1, token: record.token });
      releaseAtExit();
      return handle(lockPath, record.token);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A new session's folder is made by its creation, which comes after the lock.
      if (code === 'ENOENT' && attempt < ATTEMPTS) await fs.mkdir(dirname(lockPath), { recursive: true });
      // Windows refuses to create a file whose deletion is still pending.
      else if ((code === 'EPERM' || code === 'EACCES') && attempt < ATTEMPTS) await pause(50);
      else if (code !== 'EEXIST') throw err;
      if (code !== 'EEXIST') continue;
    }
    const other = await readRecord(lockPath);
    if (attempt >= ATTEMPTS) throw new SessionLockedError(path, lockPath, typeof other === 'object' ? describe(other) : 'another process');
    if (other === 'gone') continue;
    if (other === 'unreadable') {
      // Being written this instant (created, not yet filled), or left empty by a crash in between.
      if (await youngerThan(lockPath, 2000)) {
        await pause(100);
        continue;
      }
    } else if (!isStale(other)) {
      throw new SessionLockedError(path, lockPath, describe(other));
    }
    await removeIf(lockPath, (now) =>
      other === 'unreadable' ? typeof now !== 'object' : typeof now === 'object' && now.token === other.token,
    );
  }
}

function handle(lockPath: string, token: string): SessionLock {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const mine = held.get(lockPath);
      if (!mine || mine.token !== token || --mine.count > 0) return;
      held.delete(lockPath);
      // Never remove a lock someone else holds now (ours was deleted by hand and taken meanwhile).
      await removeIf(lockPath, (now) => typeof now === 'object' && now.token === token);
    },
  };
}

/**
 * Removes the lock file if what it holds passes `expected`. It is first moved aside under a name of its own, which
 * only one process can do, and read there: a lock another process took since it was judged is put back, so two
 * processes taking over one stale lock cannot both end up holding the session.
 */
async function removeIf(lockPath: string, expected: (now: LockRecord | 'gone' | 'unreadable') => boolean): Promise<void> {
  const aside = `${lockPath}.${process.pid}.${randomUUID().slice(0, 8)}.old`;
  try {
    await fs.rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!expected(await readRecord(aside))) await fs.link(aside, lockPath).catch(() => undefined);
  await fs.unlink(aside).catch(() => undefined);
}

async function readRecord(lockPath: string): Promise<LockRecord | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await fs.readFile(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  return parseRecord(text);
}

function parseRecord(text: string): LockRecord | 'unreadable' {
  try {
    const r = JSON.parse(text) as Partial<LockRecord>;
    if (typeof r.pid === 'number' && typeof r.host === 'string' && typeof r.since === 'number' && typeof r.token === 'string') {
      const by = typeof r.by === 'string' ? r.by : 'another program';
      const identity = typeof r.boot === 'string' && typeof r.start === 'string' ? { boot: r.boot, start: r.start } : {};
      return { pid: r.pid, host: r.host, by, since: r.since, token: r.token, ...identity };
    }
  } catch {
    // fall through
  }
  return 'unreadable';
}

async function youngerThan(lockPath: string, ms: number): Promise<boolean> {
  const st = await fs.stat(lockPath).catch(() => undefined);
  return st !== undefined && Date.now() - st.mtimeMs < ms;
}

/** A lock on another machine cannot be checked: it holds until its process releases it or someone deletes it. */
function isStale(r: LockRecord): boolean {
  if (r.host !== hostname()) return false;
  // Our own id on a lock we do not hold: left by an earlier process that had this id.
  if (r.pid === process.pid) return true;
  if (!isAlive(r.pid)) return true;
  // Alive, but is it the holder? Another boot, or another process that got the id since, is not.
  if (r.boot === undefined || r.start === undefined) return false;
  const now = processIdentity(r.pid);
  return now.boot !== undefined && (now.boot !== r.boot || now.start !== r.start);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux only (elsewhere empty): the boot id and the process's start time, which together name one process for good. */
function processIdentity(pid: number): { boot?: string; start?: string } {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: fields are counted after its closing parenthesis.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return boot && start ? { boot, start } : {};
  } catch {
    return {};
  }
}

function describe(r: LockRecord): string {
  const where = r.host === hostname() ? '' : ` on ${r.host}`;
  return `${r.by} (process ${r.pid}${where}, since ${new Date(r.since).toLocaleString()})`;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let exitHooked = false;

/** A process that exits without closing its sessions (the CLI on an error, the extension host shutting down) frees them. */
function releaseAtExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const [lockPath, { token }] of held) {
      const aside = `${lockPath}.${process.pid}.exit.old`;
      try {
        renameSync(lockPath, aside);
        const now = parseRecord(readFileSync(aside, 'utf8'));
        if (typeof now !== 'object' || now.token !== token) linkSync(aside, lockPath);
        unlinkSync(aside);
      } catch {
        // gone, or taken over: nothing of ours to free
      }
    }
  });
}
