/**
 * The client for vLLM and other OpenAI-compatible servers. Built on the
 * `openai` package for transport and auth; streaming, tool-call assembly,
 * error classification, retry, timeouts and cancellation are ours.
 */
import type { ChatMessage, ToolCall } from '../core/messages';
import { normalizeBaseURL, serverRoot } from './endpoint';
import {
  AbortedError,
  ConnectionError,
  errorFromStatus,
  LlmError,
  NotFoundError,
  ProtocolError,
  ToolsUnsupportedError,
  classifyError,
} from './errors';
import type { Semaphore } from './limiter';
import { parseModelList } from './models';
import { DEFAULT_RETRY_POLICY, type RetryInfo, type RetryPolicy, type Sleep, withRetry } from './retry';
import { createSdk, type SdkClient } from './sdk';
import { SseParser } from './sse';
import { StreamAssembler, type RawChunk, usageFromRaw } from './streamAssembler';
import { parseTextToolCalls, TextToolStreamFilter, toTextProtocolMessages } from './textToolProtocol';
import { chatRequestBody, cleanMessage, freshId, normalizeToolCalls } from './wire';
import { isMissingRoute, parseTokenizeResponse, tokenizeRequestBody } from './tokenize';
import type {
  AssistantMessage,
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

export interface VllmClientOptions {
  /** OpenAI base URL, e.g. http://localhost:8000/v1 ("/v1" is added when the URL has no path). */
  baseURL: string;
  /** Sent as Bearer token; a placeholder is sent when absent. */
  apiKey?: string;
  /** Default model; otherwise the first model the server lists. */
  model?: string;
  /** Time allowed until the response starts (streaming) or completes (non-streaming). Default 600 000 ms. */
  timeoutMs?: number;
  /** Streaming: longest silence allowed between chunks. Default 120 000 ms. */
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
  private tokenizeRoute: 'unknown' | 'present' | 'missing' = 'unknown';
  private models: ModelInfo[] | undefined;

  constructor(private readonly opts: VllmClientOptions) {
    this.baseURL = normalizeBaseURL(opts.baseURL);
    this.root = serverRoot(this.baseURL);
    this.sdk = createSdk({ baseURL: this.baseURL, apiKey: opts.apiKey, fetch: opts.fetch, defaultHeaders: opts.defaultHeaders });
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

  private switchToText(reason: string): void {
    this.mode = 'text';
    if (!this.fallbackReported) {
      this.fallbackReported = true;
      this.opts.onToolProtocolFallback?.({ baseURL: this.baseURL, reason });
    }
  }

  private async chatWithRetry(model: string, req: ChatRequest, opts: ChatCallOptions, mode: ToolProtocolMode): Promise<ChatResult> {
    let delivered = false;
    const onDelta = opts.onDelta;
    const emit = (d: ChatDelta) => {
      delivered = true;
      onDelta?.(d);
    };
    let attempts = 0;
    const result = await withRetry(
      async (n) => {
        attempts = n;
        const once = () => this.once(model, req, opts, mode, emit);
        return this.limiter ? this.limiter.run(once, opts.signal) : once();
      },
      {
        policy: this.policy,
        sleep: this.opts.sleep,
        random: this.opts.random,
        signal: opts.signal,
        onRetry: (info) => {
          this.opts.onRetry?.(info);
          if (delivered) {
            delivered = false;
            onDelta?.({ type: 'reset', attempt: info.retry + 1, reason: info.error.message });
          }
        },
      },
    );
    return { ...result, attempts };
  }

  /** One HTTP attempt, with its own timeout and cancellation. */
  private async once(
    model: string,
    req: ChatRequest,
    opts: ChatCallOptions,
    mode: ToolProtocolMode,
    emit: (d: ChatDelta) => void,
  ): Promise<Omit<ChatResult, 'attempts'>> {
    const url = this.baseURL;
    if (opts.signal?.aborted) throw new AbortedError('The request was cancelled.', { url });
    const stream = req.stream ?? true;
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs ?? 600_000;
    const idleMs = this.opts.idleTimeoutMs ?? 120_000;
    const ctl = new AbortController();
    let reason: 'user' | 'timeout' | undefined;
    let armedMs = timeoutMs;
    const onUserAbort = () => {
      reason ??= 'user';
      ctl.abort();
    };
    opts.signal?.addEventListener('abort', onUserAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let deadline = 0;
    // A streamed reply touches the idle deadline on every read; the timer is
    // only re-armed when it fires early, so a read costs no timer churn.
    const fire = () => {
      const left = deadline - Date.now();
      if (left > 0) {
        timer = setTimeout(fire, left);
        return;
      }
      reason ??= 'timeout';
      ctl.abort();
    };
    const arm = (ms: number) => {
      armedMs = ms;
      deadline = Date.now() + ms;
      if (timer) clearTimeout(timer);
      timer = setTimeout(fire, ms);
    };
    const touch = () => {
      deadline = Date.now() + armedMs;
    };
    arm(timeoutMs);
    const body = chatRequestBody(model, req, mode, stream);
    try {
      const call = this.sdk.chat.completions.create(body as never, { signal: ctl.signal, headers: req.headers });
      if (stream) {
        const resp = await call.asResponse();
        arm(idleMs);
        return await this.readStream(resp, model, mode, emit, touch);
      }
      const raw = (await call) as unknown;
      return this.fromNonStreaming(raw, model, mode, emit);
    } catch (e) {
      throw classifyError(e, { url, abortReason: reason, timeoutMs: armedMs });
    } finally {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onUserAbort);
      // Closes the socket if the body was not fully read (error paths); a no-op after a clean end.
      ctl.abort();
    }
  }

  private async readStream(
    resp: Response,
    model: string,
    mode: ToolProtocolMode,
    emit: (d: ChatDelta) => void,
    onChunk: () => void,
  ): Promise<Omit<ChatResult, 'attempts'>> {
    if (!resp.body) throw new ProtocolError(`Empty streaming response from ${this.baseURL}.`, { url: this.baseURL, retryable: true });
    const asm = new StreamAssembler(freshId);
    const filter = mode === 'text' ? new TextToolStreamFilter() : undefined;
    let sawDone = false;
    // One read loop, no async generator: each network read costs only the
    // parse of what it carried (the idle timer is touched, not re-armed).
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let finished = false;
    const handle = (data: string): void => {
      if (data === '[DONE]' || data.trim() === '[DONE]') {
        sawDone = true;
        return;
      }
      let chunk: RawChunk & { error?: unknown; object?: string };
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ProtocolError(`Malformed stream chunk from ${this.baseURL}: ${JSON.stringify(data.slice(0, 200))}`, {
          url: this.baseURL,
          retryable: true,
          body: data,
        });
      }
      if (chunk === null || typeof chunk !== 'object') {
        throw new ProtocolError(`Unexpected stream chunk from ${this.baseURL}: ${data.slice(0, 200)}`, { url: this.baseURL, retryable: true });
      }
      if (chunk.error !== undefined || chunk.object === 'error') {
        // vLLM reports failures after the stream started as a data event.
        const err = chunk.error as { code?: unknown } | undefined;
        const code = typeof err?.code === 'number' ? err.code : typeof (chunk as { code?: unknown }).code === 'number' ? (chunk as { code: number }).code : 500;
        throw errorFromStatus(code, chunk, undefined, this.baseURL);
      }
      for (const d of asm.push(chunk)) {
        if (d.type === 'content' && filter) {
          const visible = filter.push(d.text);
          if (visible) emit({ type: 'content', text: visible });
        } else {
          emit(d);
        }
      }
    };
    try {
      while (!sawDone) {
        const r = await reader.read();
        onChunk();
        if (r.done) {
          finished = true;
          for (const data of [...parser.push(decoder.decode()), ...parser.end()]) if (!sawDone) handle(data);
          break;
        }
        for (const data of parser.push(decoder.decode(r.value, { stream: true }))) {
          handle(data);
          if (sawDone) break;
        }
      }
    } finally {
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
    if (!sawDone && asm.finishReason === null) {
      throw new ConnectionError(`The stream from ${this.baseURL} ended before the reply was complete.`, 'ECONNRESET', {
        url: this.baseURL,
        retryable: true,
      });
    }
    const reasoning = asm.reasoningText || undefined;
    if (filter) {
      const tail = filter.flush();
      if (tail) emit({ type: 'content', text: tail });
      const parsed = parseTextToolCalls(asm.text, () => freshId(0));
      parsed.toolCalls.forEach((c, i) => emit({ type: 'tool_call', index: i, id: c.id, name: c.function.name, argumentsDelta: c.function.arguments }));
      return this.result(parsed.content, parsed.toolCalls, reasoning, asm, model, 'text');
    }
    return this.result(asm.text.length > 0 ? asm.text : null, asm.toolCalls(), reasoning, asm, model, 'native');
  }

  private result(
    content: string | null,
    toolCalls: ToolCall[],
    reasoning: string | undefined,
    asm: StreamAssembler,
    model: string,
    mode: ToolProtocolMode,
  ): Omit<ChatResult, 'attempts'> {
    const message: AssistantMessage = { role: 'assistant', content };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning = reasoning;
    let finishReason = asm.finishReason;
    if (mode === 'text' && toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
    return {
      message,
      usage: asm.usage,
      finishReason,
      ...(reasoning ? { reasoning } : {}),
      model: asm.model ?? model,
      toolProtocol: mode,
    };
  }

  private fromNonStreaming(raw: unknown, model: string, mode: ToolProtocolMode, emit: (d: ChatDelta) => void): Omit<ChatResult, 'attempts'> {
    const o = (raw ?? {}) as {
      choices?: Array<{ message?: Record<string, unknown>; finish_reason?: string | null }>;
      usage?: Parameters<typeof usageFromRaw>[0];
      model?: string;
    };
    const choice = o.choices?.[0];
    if (!choice || !choice.message) {
      throw new ProtocolError(`The response from ${this.baseURL} has no choices.`, { url: this.baseURL, body: raw, retryable: true });
    }
    const m = choice.message;
    const text = typeof m.content === 'string' ? m.content : null;
    const r = m.reasoning ?? m.reasoning_content;
    const reasoning = typeof r === 'string' && r.length > 0 ? r : undefined;
    let content = text;
    let toolCalls = normalizeToolCalls(m.tool_calls, freshId);
    let finishReason = choice.finish_reason ?? null;
    if (mode === 'text') {
      const parsed = parseTextToolCalls(text ?? '', () => freshId(0));
      content = parsed.content;
      toolCalls = parsed.toolCalls;
      if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
    }
    if (reasoning) emit({ type: 'reasoning', text: reasoning });
    if (content) emit({ type: 'content', text: content });
    toolCalls.forEach((c, i) => emit({ type: 'tool_call', index: i, id: c.id, name: c.function.name, argumentsDelta: c.function.arguments }));
    const message: AssistantMessage = { role: 'assistant', content };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning = reasoning;
    return {
      message,
      usage: usageFromRaw(o.usage),
      finishReason,
      ...(reasoning ? { reasoning } : {}),
      model: o.model ?? model,
      toolProtocol: mode,
    };
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
      function: { name: 'splitpoint_probe', description: 'Capability probe; never called.', parameters: { type: 'object', properties: {} } },
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

  /** GET /v1/models → ids and max_model_len. */
  async listModels(opts: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const body = await this.simpleRequest((signal) => this.sdk.get('/models', { signal }), opts.signal);
    this.models = parseModelList(body);
    return this.models;
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
  private async simpleRequest(fn: (signal: AbortSignal) => PromiseLike<unknown>, signal?: AbortSignal): Promise<unknown> {
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
          throw classifyError(e, { url: this.baseURL, abortReason: reason, timeoutMs });
        } finally {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        }
      },
      { policy: this.policy, sleep: this.opts.sleep, random: this.opts.random, signal, onRetry: this.opts.onRetry },
    );
  }
}
