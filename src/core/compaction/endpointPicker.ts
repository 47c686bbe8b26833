import type { Clock } from '../session/storage';
import { elapsedNow } from '../session/storage';

/**
 * How long an endpoint whose request failed is passed over. A replica that is down fails fast (connection refused,
 * after the client's own retries), so the least-loaded rule alone would pick it again at once, and a failed block's
 * retry would as likely go back to it as not.
 */
export const FAILED_ENDPOINT_PAUSE_MS = 30_000;

/**
 * Which compaction endpoint a worker goes to. Cache-aligned workers stay on the agent's endpoint (0), where its prefix
 * is cached; the others go to the least loaded endpoint whose last request did not fail, or to the agent's own when
 * every other one failed lately.
 */
export class EndpointPicker {
  private readonly load: number[];
  /** When each endpoint's last request failed (monotonic ms), until one succeeds there. */
  private readonly failedAt: (number | undefined)[];

  constructor(
    count: number,
    private readonly cacheAligned: boolean,
    private readonly clock: Clock,
  ) {
    this.load = new Array<number>(count).fill(0);
    this.failedAt = new Array<number | undefined>(count).fill(undefined);
  }

  /** Picks an endpoint and counts the worker on it. */
  pick(): number {
    const i = this.cacheAligned ? 0 : this.leastLoadedUp();
    this.load[i]!++;
    return i;
  }

  /** The worker is done with endpoint i; `failed`: its request failed there (not cancelled, not an unusable reply). */
  ended(i: number, failed: boolean): void {
    this.load[i]!--;
    this.failedAt[i] = failed ? elapsedNow(this.clock) : undefined;
  }

  private leastLoadedUp(): number {
    const now = elapsedNow(this.clock);
    let best = -1;
    for (let i = 0; i < this.load.length; i++) {
      const failed = this.failedAt[i];
      if (failed !== undefined && now - failed < FAILED_ENDPOINT_PAUSE_MS) continue;
      if (best < 0 || this.load[i]! < this.load[best]!) best = i;
    }
    return best < 0 ? 0 : best;
  }
}
