import { constants, promises as fs } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { SessionLock, SessionStorage } from '../core/session/storage';
import { acquireSessionLock } from './sessionLock';

/** How files are opened; tests pass one whose handles write fewer bytes per call. */
export type OpenFile = (path: string, flags: string | number) => Promise<fs.FileHandle>;

/**
 * Writes every byte of the text. One write call may write fewer bytes than
 * asked (Linux on a nearly full disk) without an error, so this loops; a call
 * that writes nothing is an error rather than a silently shorter file.
 */
async function writeAll(fh: fs.FileHandle, text: string, path: string): Promise<void> {
  const buf = Buffer.from(text, 'utf8');
  for (let off = 0; off < buf.length;) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (!(bytesWritten > 0)) {
      throw new Error(`Writing ${path} stopped after ${off} of ${buf.length} bytes (is the disk full?)`);
    }
    off += bytesWritten;
  }
}

/**
 * Session storage on the local filesystem, shared by the CLI and the extension
 * host (whose storage folders are local paths). Appends are fsynced; whole-file
 * writes go through a temp file and rename so a crash leaves the old or the new
 * file, never half of one.
 */
export class NodeFileStorage implements SessionStorage {
  constructor(
    /** Who writes, in the words another process's refusal shows ("VS Code", "splitpoint compact --adopt"). */
    private readonly holder = 'another Splitpoint process',
    private readonly open: OpenFile = (path, flags) => fs.open(path, flags),
  ) {}

  lock(path: string): Promise<SessionLock> {
    return acquireSessionLock(path, this.holder);
  }

  async read(path: string): Promise<string | undefined> {
    try {
      return await fs.readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async append(path: string, text: string): Promise<void> {
    const fh = await this.open(path, constants.O_WRONLY | constants.O_APPEND);
    const sizeBefore = (await fh.stat()).size;
    try {
      await writeAll(fh, text, path);
      await fh.datasync();
    } catch (err) {
      // A partial line would make every later line unreadable: cut it off again.
      await fh.truncate(sizeBefore).catch(() => undefined);
      throw err;
    } finally {
      await fh.close();
    }
  }

  /** Writes and syncs a temporary file whole, or removes it: a short one is never renamed or linked into place. */
  private async writeTemp(tmp: string, flags: 'w' | 'wx', text: string): Promise<void> {
    const fh = await this.open(tmp, flags);
    try {
      await writeAll(fh, text, tmp);
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await fs.unlink(tmp).catch(() => undefined);
      throw err;
    }
    await fh.close();
  }

  async writeAtomic(path: string, text: string): Promise<void> {
    await fs.mkdir(dirname(path), { recursive: true });
    // Unique per call: two writes of one path in one millisecond must not share (and interleave in) one temporary file.
    const tmp = `${path}.tmp-${process.pid}-${randomUUID().slice(0, 8)}`;
    await this.writeTemp(tmp, 'w', text);
    await fs.rename(tmp, path);
  }

  /**
   * Creates the file with its first contents in one step: written and synced
   * under a temporary name, then hard-linked into place (which fails if the
   * path exists). A crash never leaves an empty or partial new file behind,
   * which would make the next open refuse the session (the crash suite found
   * one killed between open('wx') and the write).
   */
  async create(path: string, text: string): Promise<void> {
    await fs.mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${randomUUID().slice(0, 8)}.creating`;
    await this.writeTemp(tmp, 'wx', text);
    try {
      await fs.link(tmp, path);
    } finally {
      await fs.unlink(tmp).catch(() => undefined);
    }
  }

  async copy(from: string, to: string): Promise<void> {
    await fs.copyFile(from, to, constants.COPYFILE_EXCL);
  }

  async exists(path: string): Promise<boolean> {
    try {
      await fs.access(path);
      return true;
    } catch {
      return false;
    }
  }

  async list(dir: string): Promise<string[]> {
    try {
      return await fs.readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  join(...parts: string[]): string {
    return join(...parts);
  }

  async size(path: string): Promise<number | undefined> {
    try {
      return (await fs.stat(path)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}
