/**
 * The client for vLLM and other OpenAI-compatible servers. Built on the
 * `openai` package for transport and auth; streaming (streamReader.ts),
 * reply assembly (chatResult.ts), deadlines (requestTimer.ts), reply-size
 * caps (replyLimits.ts), error classification, retry and cancellation are ours.
 */
import type { ChatMessage } from '../core/messages';
import { normalizeBaseURL, serverRoot } from './endpoint';
import type { Reply } from './chatResult';
import { replyFromBody } from './chatResult';
import { AbortedError, LlmError, NotFoundError, ProtocolError, ToolsUnsupportedError, classifyError, unexpectedAnswer } from './errors';
import type { Semaphore } from './limiter';
import { parseModelList } from './models';
import { DEFAULT_RETRY_POLICY, type RetryInfo, type RetryPolicy, type Sleep, withRetry } from './retry';
import { createSdk, type SdkClient } from './sdk';
import { sharedPacedFetch, type PacedRequestInit } from './pacedFetch';
import { redactSecrets } from './redact';
import { replyCaps } from './replyLimits';
import { RequestTimer } from './requestTimer';
import { readChatStream, readJsonBody } from './streamReader';
import { toTextProtocolMessages } from './textToolProtocol';
import { chatRequestBody, cleanMessage } from './wire';
import { isMissingRoute, parseTokenizeResponse, tokenizeRequestBody } from './tokenize';
import type {
  ChatCallOptions,
  ChatDelta,
  ChatRequest,
  ChatResult,
  LocalTokenCounter,
  ModelClient,
  ModelInfo,
  TokenCount,
  ToolProtocolMode,
  ToolSpec,
} from './types';

/**
 * A request body as UTF-8 bytes, encoded at once. Given the object, the SDK would stringify it itself and hold the
 * string until the response's headers come, which a server sends only after tokenizing the prompt; the prompt's
 * JSON, and the flat copy the transport's content-length makes of it, outlived the young generation's collections
 * in the burst of a compaction's first requests. Promoted, they brought the next full collection of the extension
 * host's heap nearer (bench/results/hostCpu.txt). The string dies here; the bytes, held until the reply ends (by
 * this request's frame and the SDK's), live outside the JS heap.
 */
function jsonBytes(body: Record<string, unknown>): Uint8Array {
  return Buffer.from(JSON.stringify(body));
}

/** The SDK's per-request fetch options (its own type is not exported from the package root). */
type SdkFetchOptions = NonNullable<NonNullable<Parameters<SdkClient['chat']['completions']['create']>[1]>['fetchOptions']>;

export interface VllmClientOptions {
  /** OpenAI base URL, e.g. http://localhost:8000/v1 ("/v1" is added when the URL has no path). */
  baseURL: string;
  /** Sent as Bearer token; a placeholder is sent when absent. */
  apiKey?: string;
  /** Default model; otherwise the first model the server lists. */
  model?: string;
  /** Deadline for a whole chat call, retries included (--request-timeout, splitpoint.requestTimeoutSeconds). Default 600 000 ms. */
  timeoutMs?: number;
  /**
   * Streaming: longest wait for the next token once the reply has begun (requestTimer.ts); keep-alive comments do not
   * reset it. Default 120 000 ms, at most timeoutMs.
   */
  idleTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Injectable for tests. */
  sleep?: Sleep;
  random?: () => number;
  onRetry?: (info: RetryInfo) => void;
  /** Chat calls hold a slot of this limiter while their HTTP request is in flight. */
  limiter?: Semaphore;
  /** 'auto' (default): native tools until the server refuses them, then the text protocol. */
  toolProtocol?: 'auto' | ToolProtocolMode;
  /** Called once, the first time the client switches to the text tool protocol. */
  onToolProtocolFallback?: (info: { baseURL: string; reason: string }) => void;
  /** Local counter for tokenize() when the server has no /tokenize. */
  localCount?: LocalTokenCounter;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
}

export class VllmClient implements ModelClient {
  readonly baseURL: string;
  /** Server root (baseURL without /v1): where vLLM serves /tokenize, /metrics, /health. */
  readonly root: string;
  readonly limiter: Semaphore | undefined;
  private readonly sdk: SdkClient;
  private readonly policy: RetryPolicy;
  private mode: ToolProtocolMode | undefined;
  private fallbackReported = false;
  /**
   * Whether this server has reported cached prompt tokens. vLLM reports them only with
   * --enable-prompt-tokens-details, and its 2025 releases leave the field out when nothing was cached: once a server
   * has reported it, a reply without it had none cached (not "unknown", which would keep cold prefills out of the
   * learned profile and every cold compaction's cache figure).
   */
  private reportsCachedTokens = false;
  private tokenizeRoute: 'unknown' | 'present' | 'missing' = 'unknown';
  private models: ModelInfo[] | undefined;

  constructor(private readonly opts: VllmClientOptions) {
    this.baseURL = normalizeBaseURL(opts.baseURL);
    this.root = serverRoot(this.baseURL);
    // Without a fetch of its own, the client reads streams in ~100 ms batches (pacedFetch.ts: client CPU).
    const transport = opts.fetch ?? sharedPacedFetch();
    this.sdk = createSdk({ baseURL: this.baseURL, apiKey: opts.apiKey, fetch: transport, defaultHeaders: opts.defaultHeaders });
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.limiter = opts.limiter;
    if (opts.toolProtocol === 'native' || opts.toolProtocol === 'text') this.mode = opts.toolProtocol;
  }

  /** The tool protocol in use: known after the first tool request or probeTools(); undefined before. */
  get toolProtocol(): ToolProtocolMode | undefined {
    return this.mode;
  }

  /** True once tokenize() found that the server has no /tokenize route. */
  get tokenizeFallsBack(): boolean {
    return this.tokenizeRoute === 'missing';
  }

  // ---------------------------------------------------------------- chat

  async chat(req: ChatRequest, opts: ChatCallOptions = {}): Promise<ChatResult> {
    const model = req.model ?? this.opts.model ?? (await this.resolveModel(opts.signal));
    const hasTools = (req.tools?.length ?? 0) > 0;
    const mode: ToolProtocolMode = hasTools ? (this.mode ?? 'native') : 'native';
    try {
      return await this.chatWithRetry(model, req, opts, mode);
    } catch (e) {
      if (e instanceof ToolsUnsupportedError && hasTools && mode === 'native' && this.opts.toolProtocol !== 'native') {
        this.switchToText(e.message);
        return this.chatWithRetry(model, req, opts, 'text');
      }
      throw e;
    }
  }

  /**
   * An error's message quotes the server's error body, which a gateway may have filled with our Authorization header:
   * the key leaves the message, and the stack V8 made from it (a log prints stacks).
   */
  private redacted(e: unknown): unknown {
    if (!(e instanceof Error)) return e;
    const keys = this.opts.apiKey ? [this.opts.apiKey] : [];
    e.message = redactSecrets(e.message, keys);
    if (e.stack) e.stack = redactSecrets(e.stack, keys);
    return e;
  }

  private switchToText(reason: string): void {
    this.mode = 'text';
    if (!this.fallbackReported) {
      this.fallbackReported = true;
      this.opts.onToolProtocolFallback?.({ baseURL: this.baseURL, reason });
    }
  }

  private async chatWithRetry(model: string, req: ChatRequest, opts: ChatCallOptions, mode: ToolProtocolMode): Promise<ChatResult> {
    const relay = new DeltaRelay(opts.onDelta);
    const emit = relay.emit.bind(relay);
    let attempts = 0;
    // One deadline for the whole call: retries do not restart it.
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs ?? 600_000;
    const deadline = { at: performance.now() + timeoutMs, ms: timeoutMs };
    const result = await withRetry(
      async (n) => {
        attempts = n;
        const once = () => this.once(model, req, opts, mode, emit, deadline);
        return this.limiter ? this.limiter.run(once, opts.signal) : once();
      },
      {
        policy: this.policy,
        sleep: this.opts.sleep,
        random: this.opts.random,
        signal: opts.signal,
        onRetry: (info) => {
          this.opts.onRetry?.(info);
          relay.restart(info.retry + 1, info.error.message);
        },
      },
    );
    return { ...result, usage: this.withCachedCount(result.usage), attempts };
  }

  private withCachedCount(u: ChatResult['usage']): ChatResult['usage'] {
    if (!u) return u;
    if (u.cachedTokens !== undefined) this.reportsCachedTokens = true;
    else if (this.reportsCachedTokens) return { ...u, cachedTokens: 0 };
    return u;
  }

  /** One HTTP attempt, under the call's deadline, its own idle clock, and cancellation. */
  private async once(
    model: string,
    req: ChatRequest,
    opts: ChatCallOptions,
    mode: ToolProtocolMode,
    emit: (d: ChatDelta) => void,
    deadline: { at: number; ms: number },
  ): Promise<Reply> {
    const url = this.baseURL;
    if (opts.signal?.aborted) throw new AbortedError('The request was cancelled.', { url });
    const stream = req.stream ?? true;
    const ctl = new AbortController();
    let userAborted = false;
    let ended = false;
    const onUserAbort = () => {
      userAborted = true;
      ctl.abort();
    };
    opts.signal?.addEventListener('abort', onUserAbort, { once: true });
    const timer = new RequestTimer(deadline.at, deadline.ms, () => ctl.abort());
    const caps = replyCaps(req.maxTokens);
    const body = jsonBytes(chatRequestBody(model, req, mode, stream));
    const idleMs = Math.min(this.opts.idleTimeoutMs ?? 120_000, deadline.ms);
    try {
      // Read by the paced transport; a fetch of the caller's own ignores the unknown field.
      const paceMs = batchInterval(req.deltaBatchMs, idleMs);
      const fetchOptions = paceMs ? ({ paceMs } satisfies PacedRequestInit as SdkFetchOptions) : undefined;
      const headers = { 'content-type': 'application/json', ...req.headers };
      const resp = await this.sdk.post('/chat/completions', { body, signal: ctl.signal, headers, fetchOptions }).asResponse();
      let reply: Reply;
      if (stream) {
        timer.idleAfterStart(idleMs);
        reply = await readChatStream(resp, { url, model, mode, caps, emit, idle: timer });
      } else {
        reply = replyFromBody(await readJsonBody(resp, { url, caps }), { url, model, mode, caps, emit });
      }
      ended = true;
      return reply;
    } catch (e) {
      // Redacted here, where the error is made: retry notices and the reset delta quote it before chat() throws it.
      if (userAborted) throw this.redacted(classifyError(e, { url, abortReason: 'user' }));
      if (timer.fired) throw timer.error(url);
      throw this.redacted(classifyError(e, { url, timeoutMs: deadline.ms, route: `POST ${url}/chat/completions` }));
    } finally {
      timer.stop();
      opts.signal?.removeEventListener('abort', onUserAbort);
      // Closes the socket if the body was not fully read (error paths). After a clean end the body is read or
      // cancelled already, and an abort would only build two DOMExceptions (ours and the SDK's) per request.
      if (!ended) ctl.abort();
    }
  }

  // ---------------------------------------------------------------- probe

  /**
   * Asks the server whether it accepts native tool calls (one tiny request,
   * max_tokens 1). Switches to the text protocol, and reports it once, if not.
   */
  async probeTools(opts: { signal?: AbortSignal; model?: string } = {}): Promise<ToolProtocolMode> {
    if (this.opts.toolProtocol === 'native' || this.opts.toolProtocol === 'text') return this.opts.toolProtocol;
    const probeTool: ToolSpec = {
      type: 'function',
      function: {
        name: 'splitpoint_probe',
        description: 'Capability probe; never called.',
        parameters: { type: 'object', properties: {} },
      },
    };
    try {
      await this.chatWithRetry(
        opts.model ?? this.opts.model ?? (await this.resolveModel(opts.signal)),
        { messages: [{ role: 'user', content: 'ping' }], tools: [probeTool], toolChoice: 'auto', maxTokens: 1, stream: false },
        { signal: opts.signal },
        'native',
      );
      this.mode = 'native';
    } catch (e) {
      if (!(e instanceof ToolsUnsupportedError)) throw e;
      this.switchToText(e.message);
    }
    return this.mode!;
  }

  // ---------------------------------------------------------------- models

  /** GET /v1/models → ids and max_model_len. A 200 without a list (a web page, another API) is a wrong endpoint: an error. */
  async listModels(opts: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const route = `GET ${this.baseURL}/models`;
    const body = await this.simpleRequest((signal) => this.sdk.get('/models', { signal }), opts.signal, route);
    if (!Array.isArray(Object(body).data)) throw this.redacted(unexpectedAnswer(route, 'no model list', body, this.baseURL));
    return (this.models = parseModelList(body));
  }

  /** The context window of `model` (default: the client's model, else the first listed). */
  async contextWindow(model?: string, opts: { signal?: AbortSignal } = {}): Promise<number | undefined> {
    const models = await this.listModels(opts);
    const id = model ?? this.opts.model;
    return (id ? models.find((m) => m.id === id) : models[0])?.maxModelLen;
  }

  private async resolveModel(signal?: AbortSignal): Promise<string> {
    const models = this.models ?? (await this.listModels({ signal }));
    if (models.length === 0) throw new NotFoundError(`The server at ${this.baseURL} lists no models.`, { url: this.baseURL });
    return models[0].id;
  }

  // ---------------------------------------------------------------- tokenize

  /**
   * Exact prompt size from POST {root}/tokenize (chat form, with the
   * generation prompt). Falls back to the local counter when the route is
   * missing; throws if it is missing and there is no local counter.
   */
  async tokenize(messages: ChatMessage[], opts: { tools?: ToolSpec[]; model?: string; signal?: AbortSignal } = {}): Promise<TokenCount> {
    if (this.tokenizeRoute !== 'missing') {
      const model = opts.model ?? this.opts.model ?? (await this.resolveModel(opts.signal));
      const tools = opts.tools && this.mode === 'text' ? undefined : opts.tools;
      const wire = messages.map(cleanMessage);
      const msgs = opts.tools && this.mode === 'text' ? toTextProtocolMessages(wire, opts.tools) : wire;
      try {
        const body = await this.simpleRequest(
          (signal) => this.sdk.post(`${this.root}/tokenize`, { body: tokenizeRequestBody(model, msgs, tools), signal }),
          opts.signal,
        );
        const parsed = parseTokenizeResponse(body);
        if (!parsed) throw new ProtocolError(`Unexpected /tokenize response from ${this.root}.`, { url: this.root, body });
        this.tokenizeRoute = 'present';
        return { ...parsed, source: 'server' };
      } catch (e) {
        if (!(e instanceof LlmError) || !isMissingRoute(e)) throw e;
        this.tokenizeRoute = 'missing';
      }
    }
    if (!this.opts.localCount) {
      throw new NotFoundError(`The server at ${this.root} has no /tokenize route and no local token counter is configured.`, {
        url: this.root,
      });
    }
    return { count: await this.opts.localCount(messages, opts.tools), source: 'local' };
  }

  /** A small JSON request with timeout, cancellation, classification and retry. */
  private async simpleRequest(fn: (signal: AbortSignal) => PromiseLike<unknown>, signal?: AbortSignal, route?: string): Promise<unknown> {
    const timeoutMs = Math.min(this.opts.timeoutMs ?? 30_000, 30_000);
    return withRetry(
      async () => {
        if (signal?.aborted) throw new AbortedError('The request was cancelled.', { url: this.baseURL });
        const ctl = new AbortController();
        let reason: 'user' | 'timeout' | undefined;
        const onAbort = () => {
          reason ??= 'user';
          ctl.abort();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const timer = setTimeout(() => {
          reason ??= 'timeout';
          ctl.abort();
        }, timeoutMs);
        try {
          return await fn(ctl.signal);
        } catch (e) {
          throw this.redacted(classifyError(e, { url: this.baseURL, abortReason: reason, timeoutMs, route }));
        } finally {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        }
      },
      { policy: this.policy, sleep: this.opts.sleep, random: this.opts.random, signal, onRetry: this.opts.onRetry },
    );
  }
}

/**
 * The caller's batch interval, kept to a quarter of the idle limit: what a
 * paced stream holds unread, the idle clock does not see, so a longer hold
 * would read as a stalled server.
 */
function batchInterval(asked: ChatRequest['deltaBatchMs'], idleMs: number): PacedRequestInit['paceMs'] {
  const most = idleMs / 4;
  if (typeof asked === 'function') return () => Math.min(asked(), most);
  return asked ? Math.min(asked, most) : undefined;
}

/**
 * Hands a call's deltas on and remembers whether any went out (a retry then tells the caller to start over). A class,
 * not a closure made per call: this runs for every token, and V8 drops a per-call closure's optimised code at each
 * major collection, so each compaction compiled it again.
 */
class DeltaRelay {
  private delivered = false;

  constructor(private readonly onDelta: ((d: ChatDelta) => void) | undefined) {}

  emit(d: ChatDelta): void {
    this.delivered = true;
    this.onDelta?.(d);
  }

  /** A retry begins: if the caller saw deltas of the failed attempt, it is told to drop them. */
  restart(attempt: number, reason: string): void {
    if (!this.delivered) return;
    this.delivered = false;
    this.onDelta?.({ type: 'reset', attempt, reason });
  }
}
