import { constants, promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SessionStorage } from '../core/session/storage';

/**
 * Session storage on the local filesystem, shared by the CLI and the extension
 * host (whose storage folders are local paths). Appends are fsynced; whole-file
 * writes go through a temp file and rename so a crash leaves the old or the new
 * file, never half of one.
 */
export class NodeFileStorage implements SessionStorage {
  async read(path: string): Promise<string | undefined> {
    try {
      return await fs.readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async append(path: string, text: string): Promise<void> {
    const fh = await fs.open(path, constants.O_WRONLY | constants.O_APPEND);
    const sizeBefore = (await fh.stat()).size;
    try {
      await fh.write(text);
      await fh.datasync();
    } catch (err) {
      // A partial line would make every later line unreadable: cut it off again.
      await fh.truncate(sizeBefore).catch(() => undefined);
      throw err;
    } finally {
      await fh.close();
    }
  }

  async writeAtomic(path: string, text: string): Promise<void> {
    await fs.mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    const fh = await fs.open(tmp, 'w');
    try {
      await fh.write(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
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
    const tmp = `${path}.${process.pid}.${Date.now()}.creating`;
    const fh = await fs.open(tmp, 'wx');
    try {
      await fh.write(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
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
}
