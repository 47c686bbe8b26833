/**
 * The `openai` client, configured for a self-hosted server: no SDK retries
 * (we retry ourselves, with classification), a placeholder key when none is
 * configured, and the raw error body kept on status errors (the SDK keeps
 * only `body.error`, which loses vLLM's legacy top-level error shape).
 */
import OpenAI from 'openai';

/** vLLM ignores the key unless started with --api-key; the SDK insists on one. */
export const PLACEHOLDER_API_KEY = 'splitpoint-no-key';

export class SdkClient extends OpenAI {
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers) {
    const e = super.makeStatusError(status, error, message, headers);
    (e as { rawBody?: unknown }).rawBody = error ?? message;
    return e;
  }
}

export interface SdkOptions {
  baseURL: string;
  apiKey?: string;
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
}

export function createSdk(opts: SdkOptions): SdkClient {
  return new SdkClient({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey && opts.apiKey.length > 0 ? opts.apiKey : PLACEHOLDER_API_KEY,
    maxRetries: 0,
    // Our own timers abort requests; keep the SDK's out of the way.
    timeout: 24 * 60 * 60 * 1000,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.defaultHeaders ? { defaultHeaders: opts.defaultHeaders } : {}),
  });
}
