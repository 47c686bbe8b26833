/**
 * A performance profile learned from the server's own timings. The client
 * records, per request, the uncached prompt tokens against the time to first
 * token, and the time per output token against the KV the running sequences
 * hold; least squares on the step formula's terms gives the coefficients.
 * What the observations cannot pin down (the scheduler limits, a term with
 * too little spread) stays as in the base profile.
 */
import type { PerfProfile } from './profile';
import { perfProfileSchema } from './profile';

export interface PrefillObservation {
  /** Prompt tokens the server computed (prompt minus cached). */
  newTokens: number;
  /** Tokens already in KV before them (the cached prefix). */
  cachedTokens: number;
  /** Time to first token, ms, less the network round trip when known. */
  ttftMs: number;
}

export interface DecodeObservation {
  /** Sum over running sequences of the KV each holds (own prompt + output when alone). */
  kvTokens: number;
  /** Mean time per output token, ms. */
  tpotMs: number;
}

export interface Observations {
  prefill: PrefillObservation[];
  decode: DecodeObservation[];
}

/** Least squares for y ≈ X·b with a small ridge, solved by Gaussian elimination; undefined when singular. */
export function leastSquares(rows: readonly number[][], y: readonly number[]): number[] | undefined {
  const k = rows[0]?.length ?? 0;
  if (rows.length < k || k === 0) return undefined;
  const a = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  rows.forEach((r, n) => {
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) a[i]![j]! += r[i]! * r[j]!;
      a[i]![k]! += r[i]! * y[n]!;
    }
  });
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return undefined;
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = 0; r < k; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let j = c; j <= k; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  return a.map((row, i) => row[k]! / row[i]!);
}

const distinct = (xs: readonly number[]) => new Set(xs.map((x) => Math.round(x))).size;

/**
 * Fits the profile's step coefficients to the observations. Prefill needs at
 * least three distinct sizes (base, per token, attention); decode two
 * distinct KV sizes (floor, per 1K KV tokens). Negative fits are clamped to 0.
 */
export function learnProfile(base: PerfProfile, obs: Observations, name: string, source: string): PerfProfile {
  const step = { ...base.step };
  const pre = obs.prefill.filter((o) => o.newTokens > 0 && o.ttftMs > 0);
  if (distinct(pre.map((o) => o.newTokens)) >= 3) {
    // One prefill, chunked by the step budget: each chunk pays the base; the attention term sums over chunks.
    const rows = pre.map((o) => {
      const chunks = Math.ceil(o.newTokens / base.maxNumBatchedTokens);
      return [chunks, o.newTokens, o.newTokens * (o.cachedTokens + o.newTokens / 2)];
    });
    const b = leastSquares(
      rows,
      pre.map((o) => o.ttftMs),
    );
    if (b) [step.prefillBaseMs, step.prefillMsPerToken, step.attentionMsPerPair] = b.map((v) => Math.max(0, v)) as [number, number, number];
  }
  const dec = obs.decode.filter((o) => o.tpotMs > 0);
  if (distinct(dec.map((o) => o.kvTokens / 1000)) >= 2) {
    const b = leastSquares(
      dec.map((o) => [1, o.kvTokens / 1000]),
      dec.map((o) => o.tpotMs),
    );
    if (b) [step.minStepMs, step.decodeKvMsPerKToken] = b.map((v) => Math.max(0, v)) as [number, number];
  }
  return perfProfileSchema.parse({ ...base, name, source, step });
}

/**
 * Keeps the latest observations per endpoint (a bounded window, so the
 * profile follows the server as it changes) and refits on demand.
 */
export class ProfileLearner {
  private readonly obs: Observations = { prefill: [], decode: [] };

  constructor(
    private readonly base: PerfProfile,
    private readonly window = 64,
  ) {}

  addPrefill(o: PrefillObservation): void {
    this.obs.prefill.push(o);
    if (this.obs.prefill.length > this.window) this.obs.prefill.shift();
  }

  addDecode(o: DecodeObservation): void {
    this.obs.decode.push(o);
    if (this.obs.decode.length > this.window) this.obs.decode.shift();
  }

  get observations(): Readonly<Observations> {
    return this.obs;
  }

  profile(name: string, source: string): PerfProfile {
    return learnProfile(this.base, this.obs, name, source);
  }
}
