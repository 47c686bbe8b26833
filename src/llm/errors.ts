/**
 * Typed errors for everything that can go wrong talking to a model server.
 * Every failure surfaces as one of these; `kind` discriminates, `retryable`
 * tells the retry loop what to do.
 */
import { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { parseContextOverflow } from '../core/overflowError';
import { endpointPort } from './endpoint';

export type LlmErrorKind =
  | 'context-overflow'
  | 'rate-limited'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'aborted'
  | 'bad-request'
  | 'tools-unsupported'
  | 'auth'
  | 'not-found'
  | 'protocol'
  | 'http';

export interface LlmErrorInit {
  status?: number;
  retryable?: boolean;
  url?: string;
  body?: unknown;
  cause?: unknown;
}

export class LlmError extends Error {
  readonly kind: LlmErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly url: string | undefined;
  /** The parsed error body the server sent, if any. */
  readonly body: unknown;
  /** Set by the retry loop: how many attempts were made before giving up. */
  attempts = 1;

  constructor(kind: LlmErrorKind, message: string, init: LlmErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.status = init.status;
    this.retryable = init.retryable ?? false;
    this.url = init.url;
    this.body = init.body;
  }
}

export class ContextOverflowError extends LlmError {
  readonly window: number;
  readonly input: number | undefined;
  readonly requested: number | undefined;
  /** When the server counted the prompt only up to a point: it has at least this many tokens. */
  readonly inputAtLeast: number | undefined;
  constructor(
    message: string,
    info: { window: number; input: number | undefined; requested?: number; inputAtLeast?: number },
    init: LlmErrorInit = {},
  ) {
    super('context-overflow', message, init);
    this.window = info.window;
    this.input = info.input;
    this.requested = info.requested;
    this.inputAtLeast = info.inputAtLeast;
  }
}

export class RateLimitedError extends LlmError {
  /** From Retry-After / retry-after-ms, when the server sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs: number | undefined, init: LlmErrorInit = {}) {
    super('rate-limited', message, { retryable: true, ...init });
    this.retryAfterMs = retryAfterMs;
  }
}

export class ServerError extends LlmError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs: number | undefined, init: LlmErrorInit = {}) {
    super('server', message, { retryable: true, ...init });
    this.retryAfterMs = retryAfterMs;
  }
}

export class TimeoutError extends LlmError {
  readonly timeoutMs: number | undefined;
  constructor(message: string, timeoutMs: number | undefined, init: LlmErrorInit = {}) {
    super('timeout', message, init);
    this.timeoutMs = timeoutMs;
  }
}

/** Connection codes that mean nothing answers at the endpoint, as opposed to a server that answered and then failed. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The server could not be reached, or the connection broke. */
export class ConnectionError extends LlmError {
  /** ECONNREFUSED, ECONNRESET, ENOTFOUND, UND_ERR_SOCKET, ... when known. */
  readonly code: string | undefined;
  /** Nothing answered at the endpoint (or the cause is unknown), as opposed to a dropped stream or a refused certificate. */
  readonly unreachable: boolean;
  constructor(message: string, code: string | undefined, init: LlmErrorInit = {}) {
    super('connection', message, init);
    this.code = code;
    this.unreachable = code === undefined || UNREACHABLE_CODES.has(code);
  }
}

export class AbortedError extends LlmError {
  constructor(message = 'The request was cancelled.', init: LlmErrorInit = {}) {
    super('aborted', message, init);
  }
}

export class BadRequestError extends LlmError {
  constructor(message: string, init: LlmErrorInit = {}) {
    super('bad-request', message, init);
  }
}

/** The server refuses tool calls: vLLM started without --enable-auto-tool-choice / --tool-call-parser. */
export class ToolsUnsupportedError extends LlmError {
  constructor(message: string, init: LlmErrorInit = {}) {
    super('tools-unsupported', message, init);
  }
}

export class AuthError extends LlmError {
  constructor(message: string, init: LlmErrorInit = {}) {
    super('auth', message, init);
  }
}

export class NotFoundError extends LlmError {
  constructor(message: string, init: LlmErrorInit = {}) {
    super('not-found', message, init);
  }
}

/** The server sent something that is not a valid chat completion (malformed chunk, truncated stream). */
export class ProtocolError extends LlmError {
  constructor(message: string, init: LlmErrorInit = {}) {
    super('protocol', message, init);
  }
}

/** The text vLLM returns when a request has tools but the server has no tool parser. */
export const TOOLS_UNSUPPORTED_RE = /enable-auto-tool-choice[\s\S]*tool-call-parser|tool-call-parser[\s\S]*enable-auto-tool-choice/i;

/** How to start vLLM, for connection-refused messages. */
export function startVllmHint(baseURL: string): string {
  return (
    `Start vLLM with: vllm serve <MODEL> --port ${endpointPort(baseURL)} --enable-prefix-caching ` +
    `--enable-auto-tool-choice --tool-call-parser <hermes|llama3_json|mistral|...>`
  );
}

/** Pulls a human-readable message out of any of the error body shapes servers use. */
export function errorBodyMessage(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (typeof body !== 'object') return String(body);
  const o = body as Record<string, unknown>;
  // vLLM ≥ 0.10 / OpenAI: {"error": {"message": ...}}
  if (o.error && typeof o.error === 'object') {
    const m = (o.error as Record<string, unknown>).message;
    if (typeof m === 'string') return m;
  }
  if (typeof o.error === 'string') return o.error;
  // vLLM legacy: {"object": "error", "message": ..., "type": ..., "code": 400}
  if (typeof o.message === 'string') return o.message;
  // FastAPI: {"detail": ...}
  if (typeof o.detail === 'string') return o.detail;
  if (o.detail !== undefined) return JSON.stringify(o.detail);
  return JSON.stringify(body);
}

/** Parses Retry-After (seconds or HTTP date) and retry-after-ms. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const date = Date.parse(ra);
  if (!Number.isNaN(date)) return Math.max(0, date - now);
  return undefined;
}

/**
 * What to check when a route under the base URL is missing or answers with something else (a web page, another
 * API): the endpoint is likely not the OpenAI base URL.
 */
export function baseUrlHint(baseURL: string): string {
  const v1 = /^(https?:\/\/[^/]+(?:\/.*?)?\/v1)\/./i.exec(baseURL);
  if (v1) return `Is ${baseURL} the OpenAI base URL? It usually ends in /v1: perhaps ${v1[1]}.`;
  if (/\/v1$/i.test(baseURL)) return `Is ${baseURL} the OpenAI base URL of an OpenAI-compatible server (such as vLLM)?`;
  return `Is ${baseURL} the OpenAI base URL? It usually ends in /v1.`;
}

/** The start of a body for a message: at most `max` characters, quoted, control characters escaped. */
export function quoteBody(body: unknown, max = 200): string {
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? String(body));
  if (text.length === 0) return 'an empty body';
  // JSON escapes C0 controls; C1 controls (a terminal reads 0x9b as CSI) and line separators are escaped too.
  const quoted = JSON.stringify(text.slice(0, max)).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return text.length > max ? `${quoted}…` : quoted;
}

/**
 * A 200 answer that is not what `route` ("POST http://h/v1/chat/completions") gives: `what` says what came instead.
 * Not retried: another attempt gets the same answer.
 */
export function unexpectedAnswer(route: string, what: string, body: unknown, baseURL: string): ProtocolError {
  return new ProtocolError(`${route} answered with ${what}: ${quoteBody(body)}. ${baseUrlHint(baseURL)}`, { url: baseURL, body });
}

/**
 * Classifies an HTTP error status plus body into a typed error. `route` ("POST http://h/v1/chat/completions"), when
 * known, is named in a 404, with what to check if the route itself is missing.
 */
export function errorFromStatus(
  status: number,
  body: unknown,
  headers: { get(name: string): string | null } | undefined,
  url: string,
  route?: string,
): LlmError {
  const detail = errorBodyMessage(body) ?? `HTTP ${status}`;
  const init: LlmErrorInit = { status, url, body };
  // Some proxies map the overflow to 413/422/500; check the text whatever the status.
  if (status === 400 || status === 413 || status === 422 || status >= 500) {
    const overflow = parseContextOverflow(detail);
    if (overflow) {
      const inputText =
        overflow.input !== undefined
          ? String(overflow.input)
          : overflow.inputAtLeast !== undefined
            ? `at least ${overflow.inputAtLeast}`
            : 'an unknown number of';
      return new ContextOverflowError(
        `Context overflow: the prompt has ${inputText} tokens but the model's window is ${overflow.window}. Server said: ${detail}`,
        overflow,
        init,
      );
    }
  }
  if (status === 400 && TOOLS_UNSUPPORTED_RE.test(detail)) {
    return new ToolsUnsupportedError(`The server does not accept tool calls: ${detail}`, init);
  }
  if (status === 400 || status === 413 || status === 422) return new BadRequestError(`Bad request (${status}): ${detail}`, init);
  if (status === 401 || status === 403) {
    return new AuthError(`The server at ${url} rejected the API key (${status}): ${detail}`, init);
  }
  if (status === 404) {
    if (!route) return new NotFoundError(`Not found (404) at ${url}: ${detail}`, init);
    // A missing model is a 404 on a route that exists (vLLM: "The model `x` does not exist.", Ollama: "model 'x' not found").
    if (/\bmodel\b[\s\S]*(does not exist|not found)/i.test(detail)) {
      return new NotFoundError(`Not found (404) for ${route}: ${detail}`, init);
    }
    // The route is missing: what to check first, then the server's words (a proxy's 404 page quoted, not pasted whole).
    const said = detail.length > 200 || detail.includes('\n') ? quoteBody(detail) : detail;
    return new NotFoundError(`Not found (404) for ${route}: ${baseUrlHint(url)} The server said: ${said}`, init);
  }
  if (status === 408) return new ServerError(`Request timeout (408) at ${url}: ${detail}`, parseRetryAfter(headers), init);
  if (status === 429) {
    return new RateLimitedError(`Rate limited (429) by ${url}: ${detail}`, parseRetryAfter(headers), init);
  }
  if (status >= 500) {
    return new ServerError(`Server error (${status}) at ${url}: ${detail}`, parseRetryAfter(headers), init);
  }
  return new LlmError('http', `HTTP ${status} from ${url}: ${detail}`, init);
}

function causeChain(e: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 8 && cur !== undefined && cur !== null; i++) {
    out.push(cur);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

/** The first errno-like code found along the cause chain. */
export function networkCode(e: unknown): string | undefined {
  for (const c of causeChain(e)) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
  }
  return undefined;
}

function isAbortLike(e: unknown): boolean {
  return causeChain(e).some(
    (c) => c instanceof APIUserAbortError || (c instanceof Error && (c.name === 'AbortError' || c.name === 'APIUserAbortError')),
  );
}

export interface ClassifyContext {
  url: string;
  /** Why our own controller fired, if it did. */
  abortReason?: 'user' | 'timeout';
  timeoutMs?: number;
  /** The request, "METHOD url", for a 404's message. */
  route?: string;
}

/**
 * OpenSSL's verification failures as Node names them: all but one carry CERT (DEPTH_ZERO_SELF_SIGNED_CERT,
 * UNABLE_TO_GET_ISSUER_CERT_LOCALLY, CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, ...).
 */
const TLS_TRUST_CODES = /CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE/;

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED', 'ETIMEDOUT']);

/** Turns anything thrown by fetch / the SDK / our stream reader into a typed error. Never loses the original: it is the cause. */
export function classifyError(e: unknown, ctx: ClassifyContext): LlmError {
  if (e instanceof LlmError) return e;
  if (ctx.abortReason === 'user') return new AbortedError('The request was cancelled.', { url: ctx.url, cause: e });
  if (ctx.abortReason === 'timeout') {
    return new TimeoutError(`No response from ${ctx.url} within ${ctx.timeoutMs} ms.`, ctx.timeoutMs, { url: ctx.url, cause: e });
  }
  if (e instanceof APIError && e.status !== undefined) {
    const raw = (e as APIError & { rawBody?: unknown }).rawBody ?? e.error;
    return errorFromStatus(e.status, raw, e.headers, ctx.url, ctx.route);
  }
  if (e instanceof APIConnectionTimeoutError) {
    return new TimeoutError(`Timed out talking to ${ctx.url}.`, ctx.timeoutMs, { url: ctx.url, cause: e });
  }
  if (isAbortLike(e)) return new AbortedError('The request was cancelled.', { url: ctx.url, cause: e });
  const code = networkCode(e);
  if (code === 'ECONNREFUSED') {
    return new ConnectionError(
      `Cannot connect to the model server at ${ctx.url} (connection refused). Is vLLM running there? ${startVllmHint(ctx.url)}`,
      code,
      { url: ctx.url, cause: e },
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new ConnectionError(`Cannot resolve the host of ${ctx.url} (${code}). Check the endpoint setting.`, code, {
      url: ctx.url,
      cause: e,
    });
  }
  const text = causeChain(e)
    .map((c) => (c instanceof Error ? c.message : String(c)))
    .join(' / ');
  if (code && TLS_TRUST_CODES.test(code)) {
    return new ConnectionError(
      `The model server at ${ctx.url} presented a TLS certificate this machine does not trust (${code}: ${text}). ` +
        'If the server uses its own certificate authority, name its PEM file in the splitpoint.tls.caFile setting ' +
        "(the CLI: start it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem) or add it to the system's trusted authorities; " +
        'check that the endpoint names the host the certificate was issued for.',
      code,
      { url: ctx.url, cause: e },
    );
  }
  if ((code && RESET_CODES.has(code)) || /terminated|socket hang up|other side closed|reset/i.test(text)) {
    return new ConnectionError(`The connection to ${ctx.url} was dropped (${code ?? 'reset'}): ${text}`, code ?? 'ECONNRESET', {
      url: ctx.url,
      retryable: true,
      cause: e,
    });
  }
  if (/bad port/i.test(text)) {
    return new ConnectionError(
      `Cannot connect to ${ctx.url}: fetch refuses that port (it is on the browser "bad ports" list). Serve vLLM on another port. ${startVllmHint(ctx.url)}`,
      code ?? 'EBADPORT',
      { url: ctx.url, cause: e },
    );
  }
  return new ConnectionError(`Request to ${ctx.url} failed: ${text}. Is the model server running there? ${startVllmHint(ctx.url)}`, code, {
    url: ctx.url,
    cause: e,
  });
}
