/**
 * Bounded retry with exponential backoff and jitter. Sleep and randomness are
 * injectable so tests can observe the schedule without waiting.
 */
import { AbortedError, LlmError } from './errors';

export interface RetryPolicy {
  /** Retries after the first attempt (0 = no retry). */
  maxRetries: number;
  /** Delay before the first retry, before jitter. */
  baseDelayMs: number;
  /** Cap on the exponential delay. */
  maxDelayMs: number;
  /** 0 = no jitter; 1 = full jitter (delay uniformly in [0, d]); 0.5 = "equal jitter" ([d/2, d]). */
  jitter: number;
  /** A Retry-After longer than this is not waited for: the error is thrown instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  jitter: 0.5,
  maxRetryAfterMs: 60_000,
};

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout-based sleep that rejects with AbortedError when the signal fires. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new AbortedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Delay before retry number `retry` (1-based). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  return Math.round(exp * (1 - jitter) + exp * jitter * random());
}

export interface RetryInfo {
  /** The retry about to happen (1-based). */
  retry: number;
  delayMs: number;
  error: LlmError;
}

export interface RetryOptions {
  policy: RetryPolicy;
  sleep?: Sleep;
  random?: () => number;
  signal?: AbortSignal;
  onRetry?: (info: RetryInfo) => void;
}

/**
 * Runs `attempt` until it succeeds, a non-retryable LlmError is thrown, or the
 * policy is exhausted. The thrown error carries `attempts`.
 */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      if (!(e instanceof LlmError)) throw e;
      e.attempts = n;
      if (!e.retryable || n > opts.policy.maxRetries || opts.signal?.aborted) throw e;
      const retryAfter = (e as { retryAfterMs?: number }).retryAfterMs;
      if (retryAfter !== undefined && retryAfter > opts.policy.maxRetryAfterMs) throw e;
      const backoff = backoffDelay(n, opts.policy, random);
      const delayMs = retryAfter !== undefined ? Math.max(retryAfter, 0) : backoff;
      opts.onRetry?.({ retry: n, delayMs, error: e });
      try {
        await sleep(delayMs, opts.signal);
      } catch (sleepErr) {
        if (sleepErr instanceof LlmError) {
          sleepErr.attempts = n;
          throw sleepErr;
        }
        throw new AbortedError('The request was cancelled while waiting to retry.', { cause: sleepErr });
      }
    }
  }
}
