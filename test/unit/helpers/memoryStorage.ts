import { MemoryStorage as CoreMemoryStorage } from '../../../src/core/session/memoryStorage';

/** Core's in-memory storage, plus a switch to make the next append fail. */
export class MemoryStorage extends CoreMemoryStorage {
  failNextAppend: Error | undefined;

  override async append(path: string, text: string): Promise<void> {
    if (this.failNextAppend) {
      const e = this.failNextAppend;
      this.failNextAppend = undefined;
      throw e;
    }
    return super.append(path, text);
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
