/**
 * The local tokenizer is not the model's. After each request the server tells
 * us the true prompt size (usage.prompt_tokens); the ratio to our local estimate
 * of the same prompt is folded into a factor that gauges multiply by.
 */
export class Calibration {
  private factorValue = 1;
  private samples = 0;

  constructor(
    /** Weight of a new observation; early samples count fully so the factor settles fast. */
    private readonly alpha = 0.3,
    /** Ratios outside this range are treated as measurement errors (e.g. a truncated prompt). */
    private readonly bounds: readonly [number, number] = [0.5, 2.5],
  ) {}

  get factor(): number {
    return this.factorValue;
  }

  get sampleCount(): number {
    return this.samples;
  }

  /** Records one request: what the server counted against what we estimated. Returns whether it was used. */
  observe(serverPromptTokens: number, localEstimate: number): boolean {
    if (!(serverPromptTokens > 0) || !(localEstimate > 0)) return false;
    const ratio = serverPromptTokens / localEstimate;
    if (ratio < this.bounds[0] || ratio > this.bounds[1]) return false;
    this.samples++;
    const weight = Math.max(this.alpha, 1 / this.samples);
    this.factorValue = this.factorValue * (1 - weight) + ratio * weight;
    return true;
  }

  apply(localTokens: number): number {
    return Math.round(localTokens * this.factorValue);
  }

  toJSON(): { factor: number; samples: number } {
    return { factor: this.factorValue, samples: this.samples };
  }

  /** Takes over a recorded state (a reopened session's), or starts afresh without one. */
  load(state: { factor: number; samples: number } | null | undefined): void {
    const r = Calibration.restore(state ?? undefined);
    this.factorValue = r.factorValue;
    this.samples = r.samples;
  }

  static restore(state: { factor: number; samples: number } | undefined): Calibration {
    const c = new Calibration();
    if (state && Number.isFinite(state.factor) && state.factor > 0) {
      c.factorValue = state.factor;
      c.samples = Math.max(0, Math.floor(state.samples));
    }
    return c;
  }
}
