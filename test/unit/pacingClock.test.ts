/**
 * The transport's pacing clocks (src/llm/pacingClock.ts) tick on one grid: clocks whose intervals divide one another
 * wake the process together, and a timer that fires a hair early does not make a stream be read twice.
 */
import assert from 'node:assert/strict';
import type { ClockTimers } from '../../src/llm/pacingClock';
import { PacingClock, nextTickDelay } from '../../src/llm/pacingClock';

/** Timers on a clock of our own; `early`: how far before its due time (on the time base) a timer runs. */
class FakeTimers implements ClockTimers {
  private t = 0;
  private queue: { at: number; f: () => void; id: number }[] = [];
  private ids = 0;

  constructor(
    start: number,
    private readonly early = 0,
  ) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(f: () => void, ms: number): unknown {
    this.queue.push({ at: this.t + ms, f, id: ++this.ids });
    return this.ids;
  }

  clearTimeout(id: unknown): void {
    this.queue = this.queue.filter((x) => x.id !== id);
  }

  /** Runs the timers due until `until`, those due at one moment in one turn; gives the moments the process woke. */
  run(until: number): number[] {
    const wakes: number[] = [];
    for (;;) {
      const at = Math.min(...this.queue.map((x) => x.at));
      // A clock that keeps waking at one moment would spin here: the wake-ups tell.
      if (!(at <= until) || wakes.length > 1000) break;
      const due = this.queue.filter((x) => x.at <= at + 1e-9);
      this.queue = this.queue.filter((x) => x.at > at + 1e-9);
      this.t = at - this.early;
      wakes.push(Math.round(at * 1000) / 1000);
      for (const d of due) d.f();
    }
    return wakes;
  }
}

/** A stream that waits on `clock` again as soon as it is resumed, counting its reads. */
function stream(clock: PacingClock): { reads: number } {
  const s = { reads: 0 };
  const wait = (): void => void clock.wait(() => (s.reads++, wait()));
  wait();
  return s;
}

describe('pacing clock', () => {
  it('ticks on multiples of its interval, at least half an interval after the first wait', () => {
    assert.equal(nextTickDelay(0, 250), 250);
    assert.equal(nextTickDelay(37, 250), 213);
    assert.equal(nextTickDelay(124, 250), 126);
    assert.equal(nextTickDelay(126, 250), 374, 'the grid point 124 ms away is too close: the one after');
    assert.ok(Math.abs(nextTickDelay(999.6, 1000) - 1000.4) < 1e-9, 'just before a grid point: the next one, not that one');
    assert.equal(nextTickDelay(1000.5, 1000), 999.5);
  });

  it('clocks of 250 ms, 500 ms and 1 s started at odd moments wake the process together: 16 wake-ups in 4 s, not 28', () => {
    const timers = new FakeTimers(37);
    const streams = [250, 500, 1000].map((ms) => stream(new PacingClock(ms, timers)));
    const wakes = timers.run(4000);
    assert.deepEqual(
      wakes,
      Array.from({ length: 16 }, (_, k) => 250 * (k + 1)),
    );
    assert.deepEqual(
      streams.map((s) => s.reads),
      [16, 8, 4],
    );
  });

  it('a timer that fires a fraction of a millisecond early does not read its streams twice', () => {
    const timers = new FakeTimers(0, 0.4);
    const s = stream(new PacingClock(250, timers));
    const wakes = timers.run(1000.5);
    assert.equal(s.reads, 4, `woke at ${wakes.join(', ')}`);
  });
});
