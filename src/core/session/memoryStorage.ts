import type { SessionStorage } from './storage';

/**
 * Session storage held in memory: for sessions that only exist for one
 * command (a plain messages array being compacted) and for tests.
 */
export class MemoryStorage implements SessionStorage {
  readonly files = new Map<string, string>();

  async read(path: string): Promise<string | undefined> {
    return this.files.get(path);
  }
  async append(path: string, text: string): Promise<void> {
    const cur = this.files.get(path);
    if (cur === undefined) throw new Error(`ENOENT: no such file ${path}`);
    this.files.set(path, cur + text);
  }
  async writeAtomic(path: string, text: string): Promise<void> {
    this.files.set(path, text);
  }
  async size(path: string): Promise<number | undefined> {
    const t = this.files.get(path);
    return t === undefined ? undefined : new TextEncoder().encode(t).length;
  }
  async create(path: string, text: string): Promise<void> {
    if (this.files.has(path)) throw new Error(`EEXIST: file already exists ${path}`);
    this.files.set(path, text);
  }
  async copy(from: string, to: string): Promise<void> {
    const t = this.files.get(from);
    if (t === undefined) throw new Error(`ENOENT: no such file ${from}`);
    if (this.files.has(to)) throw new Error(`EEXIST: file already exists ${to}`);
    this.files.set(to, t);
  }
  async exists(path: string): Promise<boolean> {
    return this.files.has(path);
  }
  async list(dir: string): Promise<string[]> {
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    return [...this.files.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  }
  join(...parts: string[]): string {
    return parts.join('/');
  }
}
