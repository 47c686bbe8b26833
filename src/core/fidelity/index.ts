export * from './types';
export { extractFacts, distinctiveToken, consumedToolResults } from './extract';
export type { ExtractOptions, FactSource } from './extract';
export { hasKey, keyMatcher } from './keys';
export { factsKeptIn, factsKeptPerText } from './survival';
export { lossReport, compactionLoss, blockLookup } from './loss';
export type { LossOptions } from './loss';
