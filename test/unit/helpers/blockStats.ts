import type { BlockStats } from '../../../src/core/compaction/events';

/** A finished worker's stats as the engine reports them: 100 tokens in, 20 out, nothing cached, one attempt. */
export const BLOCK_STATS: BlockStats = {
  inputTokens: 100,
  outputTokens: 20,
  cachedTokens: undefined,
  ms: 10,
  endpoint: 0,
  usageReported: true,
  queuedMs: 0,
  instructionTokens: 5,
  attempts: 1,
  trimmed: false,
};
