/**
 * The simulator's virtual clock, in simulated milliseconds since start.
 *
 * - While the scheduler is busy, simulated time advances only by the time of
 *   each step (from the profile), so every figure follows from the profile
 *   whatever the host's load. Real time is paced to it: a step ends, in real
 *   time, at anchor + simulated elapsed × timeScale; when the host falls
 *   behind, later steps run without sleeping until it has caught up.
 * - While idle (nothing waiting or running), simulated time follows real time
 *   divided by timeScale, so a client's think time counts as it would against
 *   a real server run at that speed. With timeScale 0 idle gaps count zero:
 *   simulated time is then exactly the sum of the steps, and runs are
 *   reproducible to the microsecond.
 * - While paused (tests, to queue requests and start them in one step), the
 *   clock stands still.
 */
import { performance } from 'node:perf_hooks';

export class VirtualClock {
  /** Simulated time at the last step boundary (or when the clock last stopped following real time). */
  private simMs = 0;
  /** Real and simulated time at which the current busy or idle stretch began. */
  private anchorReal = performance.now();
  private anchorSim = 0;
  private mode: 'idle' | 'busy' | 'paused' = 'idle';
  /** The step in progress, if any. */
  private step?: { start: number; end: number };

  constructor(readonly timeScale: number) {
    if (!(timeScale >= 0) || !Number.isFinite(timeScale)) throw new Error(`time scale must be a finite number ≥ 0, got ${timeScale}`);
  }

  /** Simulated now. */
  now(): number {
    if (this.mode === 'paused' || this.timeScale === 0) return this.step?.start ?? this.simMs;
    const followed = this.anchorSim + (performance.now() - this.anchorReal) / this.timeScale;
    if (this.mode === 'idle') return followed;
    if (!this.step) return this.simMs;
    return Math.min(this.step.end, Math.max(this.step.start, followed));
  }

  get paused(): boolean {
    return this.mode === 'paused';
  }

  /** The scheduler starts work: fold the idle stretch into simulated time and anchor the pacing. */
  startBusy(): void {
    if (this.mode === 'busy') return;
    this.simMs = this.now();
    this.mode = 'busy';
    this.anchor();
  }

  /** Nothing left to do: from here simulated time follows real time again. */
  stopBusy(): void {
    if (this.mode !== 'busy') return;
    this.mode = 'idle';
    this.anchor();
  }

  pause(): void {
    this.simMs = this.now();
    this.mode = 'paused';
  }

  /** Ends a pause; the caller restarts the scheduler if there is work. */
  resume(): void {
    if (this.mode !== 'paused') return;
    this.mode = 'idle';
    this.anchor();
  }

  /**
   * Runs one step of `ms` simulated milliseconds: resolves once real time has
   * caught up with its end (immediately, but still asynchronously, at
   * timeScale 0), and returns the simulated time at its end.
   */
  async runStep(ms: number): Promise<number> {
    const start = this.simMs;
    const end = start + ms;
    this.step = { start, end };
    const wait = this.timeScale === 0 ? 0 : this.anchorReal + (end - this.anchorSim) * this.timeScale - performance.now();
    // Under a millisecond, setTimeout would round up to 1 ms and drift; yield to I/O instead.
    await new Promise<void>((resolve) => (wait >= 1 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    this.step = undefined;
    this.simMs = end;
    return end;
  }

  private anchor(): void {
    this.anchorReal = performance.now();
    this.anchorSim = this.simMs;
  }
}
