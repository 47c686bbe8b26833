/**
 * What the session store needs from a filesystem. The CLI and the extension
 * host both use the Node implementation in src/node; tests can use memory.
 */
export interface SessionStorage {
  /** File contents, or undefined when the file does not exist. */
  read(path: string): Promise<string | undefined>;
  /** Appends and flushes to disk before resolving (the log's durability point). */
  append(path: string, text: string): Promise<void>;
  /** Writes the whole file through a temporary file and a rename, so readers never see half of it. */
  writeAtomic(path: string, text: string): Promise<void>;
  /** Creates the file with the given contents; fails if it already exists. */
  create(path: string, text: string): Promise<void>;
  copy(from: string, to: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** File names (not paths) in a directory; empty when it does not exist. */
  list(dir: string): Promise<string[]>;
  join(...parts: string[]): string;
  /** Size in bytes, or undefined when the file does not exist: tells a listing which cached summaries are stale. */
  size?(path: string): Promise<number | undefined>;
  /**
   * Takes the session's writer lock, or throws SessionLockedError naming the process that holds it. Two processes
   * appending to one log (the CLI's `compact --adopt` while the editor has the session open) each write from their own
   * view of it: a compaction one of them never saw, an undo of the wrong layer, and the log can end up refusing to load.
   * A process may take the same lock again; it is freed when every holder has released it. Memory storage has no other
   * process to guard against and leaves this out.
   */
  lock?(path: string): Promise<SessionLock>;
}

/** Held while this process may write a session log. */
export interface SessionLock {
  release(): Promise<void>;
}

export interface Clock {
  /** Wall-clock ms since the epoch, for timestamps. */
  now(): number;
  /**
   * Ms on a clock that never steps, for durations. The wall clock jumps when the system corrects it (by minutes, on
   * some VMs), and a duration measured across the jump is shown as measured (a compaction's time against the plan's
   * prediction). Test clocks may leave it out: durations then use now().
   */
  monotonic?(): number;
}

/** The clock durations are measured on: the monotonic one when the clock has one. */
export function elapsedNow(c: Clock): number {
  return c.monotonic ? c.monotonic() : c.now();
}

// Whole ms, as Date.now gives: durations are stored and shown as integers.
export const systemClock: Clock = { now: () => Date.now(), monotonic: () => Math.round(performance.now()) };

export interface IdSource {
  next(prefix: string): string;
}

export const randomIds: IdSource = {
  next: (prefix) => `${prefix}_${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`,
};
