import type { Clock } from '../session/storage';
import { elapsedNow } from '../session/storage';

/**
 * A compaction's run as measured: the time during which any of its workers ran (a block regenerated minutes later adds
 * its own run, not the minutes between), the requests sent, and the most in flight at once.
 */
export class RunMeter {
  private running = 0;
  private busySince = 0;
  private busyMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  requests = 0;

  constructor(private readonly clock: Clock) {}

  workerStarted(): void {
    if (this.running++ === 0) this.busySince = elapsedNow(this.clock);
  }

  workerEnded(): void {
    if (--this.running === 0) this.busyMs += elapsedNow(this.clock) - this.busySince;
  }

  requestSent(): void {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.requests++;
  }

  requestEnded(): void {
    this.inFlight--;
  }

  /** Time during which a worker ran, to now. */
  busyNow(): number {
    return this.busyMs + (this.running > 0 ? elapsedNow(this.clock) - this.busySince : 0);
  }
}
