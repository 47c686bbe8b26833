/**
 * A server's performance profile: what one scheduler step of a vLLM-v1-style
 * server costs, and the scheduler's limits. The simulator runs its step
 * scheduler on it and the compaction planner predicts wall times from it, so
 * both follow one formula; the numbers come from a calibration (measured on
 * real hardware) or are learned from the server's own timings.
 *
 * The step model is the calibration's mixed-step formula:
 *   t = max(minStepMs, prefillBaseMs + prefillMsPerToken * Σn_i)
 *       + attentionMsPerPair * Σ n_i * (P_i + n_i / 2)
 *       + decodeKvMsPerKToken * (KV tokens held by the decoding sequences) / 1000
 * where n_i are the new (prefill) tokens of sequence i in this step and P_i
 * the tokens it already holds in KV (cached prefix plus earlier chunks).
 */
import { z } from 'zod';

export const perfProfileSchema = z.object({
  name: z.string().min(1),
  /** Where the numbers come from (a calibration file, a measurement, a hand-made test profile). */
  source: z.string(),
  /** vLLM --max-num-seqs: sequences that may run in one step. */
  maxNumSeqs: z.number().int().positive(),
  /** vLLM --max-num-batched-tokens: decode tokens plus prefill chunk tokens per step. */
  maxNumBatchedTokens: z.number().int().positive(),
  /** KV cache capacity in tokens (physical, shared prefix blocks counted once). */
  kvCapacityTokens: z.number().int().positive(),
  step: z.object({
    /** Floor of a step: weights are read once per step whatever the batch. */
    minStepMs: z.number().nonnegative(),
    prefillBaseMs: z.number().nonnegative(),
    prefillMsPerToken: z.number().nonnegative(),
    /** Attention cost per (query, key) pair of prefill. */
    attentionMsPerPair: z.number().nonnegative(),
    /** Decode cost per 1,000 KV tokens read by the running sequences. */
    decodeKvMsPerKToken: z.number().nonnegative(),
  }),
});

export type PerfProfile = z.infer<typeof perfProfileSchema>;

/** One sequence's prefill work in a step. */
export interface PrefillChunk {
  /** New tokens computed in this step. */
  newTokens: number;
  /** Tokens the sequence already holds in KV before this chunk. */
  heldTokens: number;
}

export interface StepWork {
  prefill: readonly PrefillChunk[];
  /** Sum over decoding sequences of the KV tokens each one attends to. */
  decodeKvTokens: number;
  /** Number of sequences decoding one token in this step. */
  decodeSeqs: number;
}

export function stepTimeMs(profile: PerfProfile, work: StepWork): number {
  let prefillTokens = 0;
  let pairs = 0;
  for (const c of work.prefill) {
    prefillTokens += c.newTokens;
    pairs += prefillPairs(c.newTokens, c.heldTokens);
  }
  return mixedStepMs(profile, prefillTokens, pairs, work.decodeKvTokens, work.decodeSeqs);
}

/** Attention pairs of a prefill chunk of `newTokens` over `heldTokens` already in the KV cache (stepTimeMs sums them). */
export function prefillPairs(newTokens: number, heldTokens: number): number {
  return newTokens * (heldTokens + newTokens / 2);
}

/** The mixed-step formula over a step's sums (the step model sums its chunks itself, without a StepWork per step). */
export function mixedStepMs(
  profile: PerfProfile,
  prefillTokens: number,
  pairs: number,
  decodeKvTokens: number,
  decodeSeqs: number,
): number {
  const s = profile.step;
  if (prefillTokens === 0 && decodeSeqs === 0) return 0;
  const base = Math.max(s.minStepMs, prefillTokens > 0 ? s.prefillBaseMs + s.prefillMsPerToken * prefillTokens : 0);
  return base + s.attentionMsPerPair * pairs + (s.decodeKvMsPerKToken * decodeKvTokens) / 1000;
}

/**
 * H100 80GB, Qwen2.5-Coder-7B shape, from shared/calibration (copied to
 * test/fixtures/calibration/h100-qwen2.5-coder-7b.json; a unit test ties the
 * numbers to that file). The KV capacity is derived, not measured:
 * (0.9 × 80 GB − 15.2 GB of bf16 weights) / 56 KiB per token (28 layers × 2 × 4 KV heads × 128 × 2 bytes).
 */
export const H100_7B: PerfProfile = {
  name: 'h100-7b',
  source: 'calibration h100-qwen2.5-coder-7b.json (measured 2026-11-21 on one H100; mixed-step formula)',
  maxNumSeqs: 256,
  maxNumBatchedTokens: 8192,
  kvCapacityTokens: 990_000,
  step: {
    minStepMs: 6.33,
    prefillBaseMs: 3.1,
    prefillMsPerToken: 0.0215,
    attentionMsPerPair: 1.4e-6,
    decodeKvMsPerKToken: 0.01842,
  },
};

/**
 * Round numbers a test can compute by hand: a step is at least 10 ms, a
 * prefill step costs 0.01 ms per token, no attention term, 1 ms per 1,000 KV
 * tokens read while decoding; 4 sequences, 1,000 tokens per step.
 */
export const UNIT_PROFILE: PerfProfile = {
  name: 'unit',
  source: 'hand-made for tests',
  maxNumSeqs: 4,
  maxNumBatchedTokens: 1000,
  kvCapacityTokens: 1_000_000,
  step: { minStepMs: 10, prefillBaseMs: 0, prefillMsPerToken: 0.01, attentionMsPerPair: 0, decodeKvMsPerKToken: 1 },
};

export const NAMED_PROFILES: Readonly<Record<string, PerfProfile>> = { 'h100-7b': H100_7B, unit: UNIT_PROFILE };

export function namedProfile(name: string): PerfProfile | undefined {
  return NAMED_PROFILES[name];
}
