/**
 * One timer for every paced stream of a transport. Each wake-up of the
 * process costs far more CPU than the little work a batch of SSE events
 * needs (about 50–150 µs on our 2-core test VM, measured), so the streams do
 * not each keep a timer: they wait on this clock, which wakes once per
 * interval and resumes all of them in that one turn of the event loop.
 */
export class PacingClock {
  private waiting = new Set<() => void>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private count = 0;

  constructor(readonly intervalMs: number) {}

  /** Runs `resume` at the next tick (at most one interval away); the returned function withdraws it. */
  wait(resume: () => void): () => void {
    this.waiting.add(resume);
    this.timer ??= setTimeout(this.tick, this.intervalMs);
    return () => {
      this.waiting.delete(resume);
      if (this.waiting.size === 0 && this.timer) {
        clearTimeout(this.timer);
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
