/** Public surface of the model-server client. */
export * from './types';
export * from './errors';
export { VllmClient, type VllmClientOptions } from './client';
export { Semaphore, limiterFor } from './limiter';
export {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  realSleep,
  withRetry,
  type RetryPolicy,
  type RetryInfo,
  type RetryOptions,
  type Sleep,
} from './retry';
export { StreamAssembler, usageFromRaw, type RawChunk, type RawToolCallDelta } from './streamAssembler';
export {
  describeToolsForPrompt,
  parseTextToolCalls,
  renderToolCallBlock,
  renderToolResult,
  toTextProtocolMessages,
  TextToolStreamFilter,
  TOOL_CALL_INFO,
  TOOL_RESULT_INFO,
  type ParsedText,
} from './textToolProtocol';
export { normalizeBaseURL, serverRoot } from './endpoint';
export { parseModelList } from './models';
export { PLACEHOLDER_API_KEY } from './sdk';
