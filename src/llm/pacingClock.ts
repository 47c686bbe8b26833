/**
 * One timer for every paced stream of a transport. Each wake-up of the
 * process costs far more CPU than the little work a batch of SSE events
 * needs (about 50–150 µs on our 2-core test VM, measured), so the streams do
 * not each keep a timer: they wait on this clock, which wakes once per
 * interval and resumes all of them in that one turn of the event loop.
 *
 * Ticks fall on multiples of the interval of one time base shared by every
 * clock, so clocks whose intervals divide one another tick in the same turn:
 * a 1 s clock's ticks are also ticks of the 500 ms and 250 ms clocks, and
 * the process wakes once for all three, not three times at unrelated moments.
 * A tick is at least half an interval after the first wait for it: a timer
 * may fire a fraction of a millisecond before its grid point by the time
 * base's reckoning, and the streams it resumes wait again at once; the next
 * grid point then must not be the one just passed.
 */
export interface ClockTimers {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

const realTimers: ClockTimers = {
  now: () => performance.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
};

export class PacingClock {
  private waiting = new Set<() => void>();
  private timer: unknown;
  private count = 0;

  constructor(
    readonly intervalMs: number,
    private readonly timers: ClockTimers = realTimers,
  ) {}

  /** Runs `resume` at the next tick (at most one and a half intervals away); the returned function withdraws it. */
  wait(resume: () => void): () => void {
    this.waiting.add(resume);
    if (this.timer === undefined) this.timer = this.timers.setTimeout(this.tick, nextTickDelay(this.timers.now(), this.intervalMs));
    return () => {
      this.waiting.delete(resume);
      if (this.waiting.size === 0 && this.timer !== undefined) {
        this.timers.clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Ticks so far (tests: many streams share them). */
  get ticks(): number {
    return this.count;
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.count++;
    const due = this.waiting;
    this.waiting = new Set();
    for (const resume of due) resume();
  };
}

/** Ms from `now` to the first multiple of `interval` at least half an interval away. */
export function nextTickDelay(now: number, interval: number): number {
  return (Math.floor((now + interval / 2) / interval) + 1) * interval - now;
}
