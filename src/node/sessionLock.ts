import { randomUUID } from 'node:crypto';
import { promises as fs, readFileSync, unlinkSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import { dirname } from 'node:path';
import { SessionLockedError } from '../core/session/errors';
import type { SessionLock } from '../core/session/storage';

/**
 * A session's writer lock: a file next to the log, created exclusively, that
 * names the process holding it. Whether its holder is gone is decided by the
 * process id on this machine (and the boot time, since ids are reused after a
 * reboot), so a crashed holder never blocks the session and nothing has to
 * refresh the lock while it is held. (proper-lockfile decides by the lock's age
 * instead, which needs a timer touching the file every few seconds in the
 * extension host and calls a lock compromised after a laptop's sleep.)
 */
interface LockRecord {
  pid: number;
  host: string;
  by: string;
  since: number;
  token: string;
}

/** Locks this process holds, by lock file: taken again, a lock is counted, and freed when the count is back at 0. */
const held = new Map<string, { count: number; token: string }>();

export function lockPathOf(path: string): string {
  return `${path}.lock`;
}

export async function acquireSessionLock(path: string, by: string): Promise<SessionLock> {
  const lockPath = lockPathOf(path);
  const mine = held.get(lockPath);
  if (mine) {
    mine.count++;
    return handle(lockPath, mine.token);
  }
  const record: LockRecord = { pid: process.pid, host: hostname(), by, since: Date.now(), token: randomUUID() };
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(lockPath, JSON.stringify(record) + '\n', { flag: 'wx' });
      held.set(lockPath, { count: 1, token: record.token });
      releaseAtExit();
      return handle(lockPath, record.token);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A new session's folder is made by its creation, which comes after the lock.
      if (code === 'ENOENT' && attempt < 3) {
        await fs.mkdir(dirname(lockPath), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') throw err;
    }
    const other = await readRecord(lockPath);
    if (attempt >= 3) throw new SessionLockedError(path, lockPath, typeof other === 'object' ? describe(other) : 'another process');
    if (other === 'gone') continue;
    if (other === 'unreadable') {
      // Being written this instant (created, not yet filled), or left empty by a crash in between.
      if (await youngerThan(lockPath, 2000)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
    } else if (!isStale(other)) {
      throw new SessionLockedError(path, lockPath, describe(other));
    }
    // Two processes taking over one stale lock at the same instant could both succeed; a crash has to come first.
    await fs.unlink(lockPath).catch(() => undefined);
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
      const now = await readRecord(lockPath);
      // Never remove a lock someone else took over (ours was judged stale, or deleted by hand).
      if (typeof now === 'object' && now.token === token) await fs.unlink(lockPath).catch(() => undefined);
    },
  };
}

async function readRecord(lockPath: string): Promise<LockRecord | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await fs.readFile(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  try {
    const r = JSON.parse(text) as Partial<LockRecord>;
    if (typeof r.pid === 'number' && typeof r.host === 'string' && typeof r.since === 'number' && typeof r.token === 'string')
      return { pid: r.pid, host: r.host, by: typeof r.by === 'string' ? r.by : 'another program', since: r.since, token: r.token };
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
  // Taken before this machine last booted (a minute's slack for clock steps): its id may now be someone else's.
  if (r.since < Date.now() - uptime() * 1000 - 60_000) return true;
  return !isAlive(r.pid);
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

function describe(r: LockRecord): string {
  const where = r.host === hostname() ? '' : ` on ${r.host}`;
  return `${r.by} (process ${r.pid}${where}, since ${new Date(r.since).toLocaleString()})`;
}

let exitHooked = false;

/** A process that exits without closing its sessions (the CLI on an error, the extension host shutting down) frees them. */
function releaseAtExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const [lockPath, { token }] of held) {
      try {
        if ((JSON.parse(readFileSync(lockPath, 'utf8')) as LockRecord).token === token) unlinkSync(lockPath);
      } catch {
        // gone or taken over: nothing of ours to free
      }
    }
  });
}
