/**
 * Exact prompt counts from vLLM's POST /tokenize (chat form). vLLM serves it
 * at the server root, not under /v1. When the route is missing (404/405, or
 * a non-vLLM server) the caller's local counter is used, and the route is
 * remembered as missing so it is not asked again.
 */
import type { ChatMessage } from '../core/messages';
import type { LlmError } from './errors';
import type { ToolSpec } from './types';

export function tokenizeRequestBody(model: string, messages: ChatMessage[], tools?: ToolSpec[]): Record<string, unknown> {
  return {
    model,
    messages,
    add_generation_prompt: true,
    ...(tools && tools.length > 0 ? { tools } : {}),
  };
}

export function parseTokenizeResponse(body: unknown): { count: number; maxModelLen?: number } | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  const count = typeof o.count === 'number' ? o.count : Array.isArray(o.tokens) ? o.tokens.length : undefined;
  if (count === undefined) return undefined;
  return typeof o.max_model_len === 'number' ? { count, maxModelLen: o.max_model_len } : { count };
}

/** True when the error means "this server has no /tokenize route" rather than "bad model" etc. */
export function isMissingRoute(e: LlmError): boolean {
  if (e.status === 405 || e.status === 501) return true;
  if (e.status !== 404) return false;
  const text = JSON.stringify(e.body ?? '').toLowerCase();
  return !/model.*does not exist/.test(text);
}
