/**
 * A counting semaphore with observable in-flight numbers, and a registry that
 * hands out one per endpoint so every compaction worker hitting the same vLLM
 * shares the same limit.
 */
import { AbortedError } from './errors';
import { normalizeBaseURL } from './endpoint';

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class Semaphore {
  private _max: number;
  private _inFlight = 0;
  private _maxInFlight = 0;
  private readonly waiters: Waiter[] = [];

  constructor(max: number) {
    this._max = Semaphore.check(max);
  }

  private static check(max: number): number {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`concurrency limit must be a positive integer, got ${max}`);
    return max;
  }

  get max(): number {
    return this._max;
  }
  /** Holders right now. */
  get inFlight(): number {
    return this._inFlight;
  }
  /** Highest number of simultaneous holders seen since creation or resetStats(). */
  get maxInFlight(): number {
    return this._maxInFlight;
  }
  get waiting(): number {
    return this.waiters.length;
  }

  resetStats(): void {
    this._maxInFlight = this._inFlight;
  }

  /** Raising the limit admits waiters at once; lowering it lets holders finish. */
  setMax(max: number): void {
    this._max = Semaphore.check(max);
    this.drain();
  }

  /** Resolves with a release function once a slot is free, FIFO. Rejects with AbortedError if the signal fires first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError('Cancelled while waiting for a concurrency slot.'));
    if (this._inFlight < this._max && this.waiters.length === 0) return Promise.resolve(this.take());
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new AbortedError('Cancelled while waiting for a concurrency slot.'));
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
    });
  }

  /** Runs fn while holding a slot. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private take(): () => void {
    this._inFlight++;
    if (this._inFlight > this._maxInFlight) this._maxInFlight = this._inFlight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this._inFlight--;
      this.drain();
    };
  }

  private drain(): void {
    while (this._inFlight < this._max && this.waiters.length > 0) {
      const w = this.waiters.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
      w.resolve(this.take());
    }
  }
}

const registry = new Map<string, Semaphore>();

/** The shared limiter for an endpoint. `max` (if given) updates the limit. Default limit: 4. */
export function limiterFor(baseURL: string, max?: number): Semaphore {
  const key = normalizeBaseURL(baseURL);
  let s = registry.get(key);
  if (!s) {
    s = new Semaphore(max ?? 4);
    registry.set(key, s);
  } else if (max !== undefined && max !== s.max) {
    s.setMax(max);
  }
  return s;
}
