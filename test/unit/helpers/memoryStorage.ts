import type { SessionStorage } from '../../../src/core/session/storage';

/** In-memory SessionStorage that can be told to fail, for store tests. */
export class MemoryStorage implements SessionStorage {
  readonly files = new Map<string, string>();
  failNextAppend: Error | undefined;
  appends = 0;

  async read(path: string): Promise<string | undefined> {
    return this.files.get(path);
  }
  async append(path: string, text: string): Promise<void> {
    if (this.failNextAppend) {
      const e = this.failNextAppend;
      this.failNextAppend = undefined;
      throw e;
    }
    if (!this.files.has(path)) throw new Error(`ENOENT: ${path}`);
    this.appends++;
    this.files.set(path, this.files.get(path)! + text);
  }
  async writeAtomic(path: string, text: string): Promise<void> {
    this.files.set(path, text);
  }
  async create(path: string, text: string): Promise<void> {
    if (this.files.has(path)) throw new Error(`EEXIST: ${path}`);
    this.files.set(path, text);
  }
  async copy(from: string, to: string): Promise<void> {
    const t = this.files.get(from);
    if (t === undefined) throw new Error(`ENOENT: ${from}`);
    if (this.files.has(to)) throw new Error(`EEXIST: ${to}`);
    this.files.set(to, t);
  }
  async exists(path: string): Promise<boolean> {
    return this.files.has(path);
  }
  async list(dir: string): Promise<string[]> {
    return [...this.files.keys()].filter((p) => p.startsWith(dir + '/')).map((p) => p.slice(dir.length + 1));
  }
  join(...parts: string[]): string {
    return parts.join('/');
  }
}

/** Deterministic ids and clock so logs can be compared byte for byte. */
export function counterIds(): { next(prefix: string): string } {
  let n = 0;
  return { next: (prefix) => `${prefix}_${++n}` };
}

export function fixedClock(start = 1_700_000_000_000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}
