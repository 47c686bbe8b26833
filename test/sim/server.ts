/**
 * The vLLM-compatible simulator: an HTTP server (node:http, no framework)
 * that answers like vLLM's OpenAI server, with a prefix cache, a latency
 * model, an extractive summarizer, a scripted agent and fault injection.
 * Test and demo only; never shipped in the VSIX.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { DEFAULT_LATENCY, Engine, emptyStats, pause, type LatencyModel, type RequestRecord, type SimStats } from './engine';
import { describeFault, FaultQueue, parseFaultHeader, type SimFault } from './faults';
import { isStallFault, serveStallFault } from './stallFaults';
import { HttpError, parseJson, readBody, sendJson } from './http';
import { metricsText as renderMetrics } from './metrics';
import { modelsBody } from './models';
import { PrefixCache } from './prefixCache';
import { Replier, type JudgeVerdict, type Reply } from './replies';
import { loadScript, ScriptPlayer, type ScriptReply, type SimScript } from './script';
import { renderTokens, type WireMessage, type WireTool } from './template';
import { makeTokenizer, type SimTokenizer } from './tokenizer';
import { errorBody, overflowMessage, TOOLS_UNSUPPORTED_MESSAGE, type ErrorShape, type OverflowWording } from './vllmErrors';

export interface SimOptions {
  /** 0 (default) = any free port. */
  port?: number;
  host?: string;
  model?: string;
  /** The context window reported as max_model_len and enforced (default 32768). */
  maxModelLen?: number;
  tokenizer?: 'tiktoken' | 'char' | SimTokenizer;
  blockSize?: number;
  /** KV pool size in blocks (default 16384 = 262144 tokens at 16 per block). */
  cacheCapacityBlocks?: number;
  /** Register blocks only after prefill completes, instead of at admission (vLLM v1). */
  pessimistic?: boolean;
  /** false = no prefix caching (default true). */
  prefixCaching?: boolean;
  latency?: Partial<LatencyModel>;
  /** false = behave as vLLM without --enable-auto-tool-choice/--tool-call-parser (default true). */
  toolParser?: boolean;
  /** false = no /tokenize route (404). */
  tokenizeRoute?: boolean;
  /** Report usage.prompt_tokens_details (vLLM --enable-prompt-tokens-details). Default true. */
  promptTokensDetails?: boolean;
  errorShape?: ErrorShape;
  overflowWording?: OverflowWording;
  /** The summarizer's length prior in tokens (default 500). */
  summaryTokens?: number;
  script?: SimScript | ScriptReply[] | string;
  /** Field name for reasoning in replies (default 'reasoning'; older vLLM: 'reasoning_content'). */
  reasoningField?: 'reasoning' | 'reasoning_content';
  /** Require this Bearer token (vLLM --api-key). */
  apiKey?: string;
  /** Tokens per streamed content chunk (default 4). */
  streamChunkTokens?: number;
  log?: (line: string) => void;
}

export interface SimHandle {
  /** OpenAI base URL, http://127.0.0.1:PORT/v1 */
  url: string;
  /** Server root, http://127.0.0.1:PORT */
  origin: string;
  port: number;
  model: string;
  maxModelLen: number;
  /** Live statistics and the per-request log. */
  readonly stats: SimStats;
  readonly cache: PrefixCache;
  readonly tokenizer: SimTokenizer;
  injectFault(fault: SimFault): void;
  clearFaults(): void;
  setScript(script: SimScript | ScriptReply[] | string | undefined): void;
  /** Scripted judge verdicts, consumed in order by judge requests before the deterministic judge takes over. */
  queueJudgeVerdicts(verdicts: JudgeVerdict[]): void;
  /** Replaces the prefix cache (e.g. to switch pessimistic on/off); only between requests. */
  resetCache(opts?: { pessimistic?: boolean; capacityBlocks?: number; enabled?: boolean }): void;
  resetStats(): void;
  /** The prompt tokens the simulator would see for this chat. */
  tokenize(messages: WireMessage[], tools?: WireTool[], addGenerationPrompt?: boolean): number[];
  metricsText(): string;
  /** The JSON body of the last /v1/chat/completions request. */
  lastChatBody(): Record<string, unknown> | undefined;
  /**
   * Connections carrying a request right now. Idle keep-alive connections
   * (which HTTP clients keep pooled, and are not leaks) are not counted.
   */
  openSockets(): number;
  /** Every TCP connection currently open, busy or idle. */
  connectedSockets(): number;
  close(): Promise<void>;
}


export async function startSimulator(opts: SimOptions = {}): Promise<SimHandle> {
  const model = opts.model ?? 'sim-model';
  const maxModelLen = opts.maxModelLen ?? 32_768;
  const tokenizer = makeTokenizer(opts.tokenizer);
  const latency: LatencyModel = { ...DEFAULT_LATENCY, ...opts.latency };
  const errorShape = opts.errorShape ?? 'current';
  const reasoningField = opts.reasoningField ?? 'reasoning';
  const chunkTokens = Math.max(1, opts.streamChunkTokens ?? 4);
  const log = opts.log ?? (() => undefined);
  const newCache = (o: { pessimistic?: boolean; capacityBlocks?: number; enabled?: boolean } = {}) =>
    new PrefixCache({
      blockSize: opts.blockSize ?? 16,
      capacityBlocks: o.capacityBlocks ?? opts.cacheCapacityBlocks ?? 16_384,
      pessimistic: o.pessimistic ?? opts.pessimistic ?? false,
      enabled: o.enabled ?? opts.prefixCaching ?? true,
    });
  const stats = emptyStats();
  let engine = new Engine(latency, newCache(), stats);
  const faults = new FaultQueue();
  let player: ScriptPlayer | undefined = opts.script ? new ScriptPlayer(loadScript(opts.script)) : undefined;
  let lastChatBody: Record<string, unknown> | undefined;
  const count = (text: string) => tokenizer.encode(text).length;
  count('warm up the tokenizer before the first request is timed');

  // Keep-alive sockets carry many requests: per-request listeners are removed
  // again once the response is over (a tick later, so a close caused by the
  // same abort is still seen), or they pile up on the socket.
  const watchSocket = (socket: Socket, record: RequestRecord, res?: ServerResponse) => {
    if (socket.destroyed) {
      record.socketClosed = true;
      return;
    }
    const onClose = () => (record.socketClosed = true);
    socket.once('close', onClose);
    res?.once('close', () => setImmediate(() => socket.off('close', onClose)));
  };

  const judgeQueue: JudgeVerdict[] = [];
  const replier = new Replier({ count, chunkTokens, summaryTokens: opts.summaryTokens, player: () => player, judgeQueue: () => judgeQueue });
  const metricsText = () => renderMetrics(model, stats, engine.cache.stats());

  const sendError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
    sendJson(res, status, errorBody(message, status, errorShape), headers);

  // ------------------------------------------------------------ chat

  async function handleChat(socket: Socket, res: ServerResponse, body: Record<string, unknown>, fault: SimFault | undefined): Promise<void> {
    const id = `chatcmpl-${randomUUID().replace(/-/g, '')}`;
    const created = Math.floor(Date.now() / 1000);
    const stream = body.stream === true;
    const record: RequestRecord = {
      id,
      kind: 'chat',
      stream,
      arrival: engine.now(),
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      status: 'queued',
      clientClosed: false,
      ...(fault ? { fault: describeFault(fault) } : {}),
    };
    stats.requests.push(record);
    watchSocket(socket, record, res);
    lastChatBody = body;
    const fail = (status: number, message: string, headers?: Record<string, string>) => {
      record.status = 'error';
      record.httpStatus = status;
      record.finished = engine.now();
      sendError(res, status, message, headers);
    };

    if (body.model !== undefined && body.model !== model) return fail(404, `The model \`${String(body.model)}\` does not exist.`);
    const messages = body.messages as WireMessage[] | undefined;
    if (!Array.isArray(messages) || messages.length === 0) return fail(400, 'messages: field required (a non-empty list)');
    const tools = (Array.isArray(body.tools) ? body.tools : []) as WireTool[];
    record.messages = messages.length;
    record.tools = tools.length;
    const toolChoice = body.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
    if (tools.length > 0 && toolChoice === 'auto' && (opts.toolParser === false || fault?.noToolParser)) {
      return fail(400, TOOLS_UNSUPPORTED_MESSAGE);
    }
    const tokens = renderTokens(tokenizer, messages, tools, true);
    record.promptTokens = tokens.length;
    const maxTokensRaw = body.max_completion_tokens ?? body.max_tokens;
    const maxTokens = typeof maxTokensRaw === 'number' ? maxTokensRaw : undefined;
    if (tokens.length >= maxModelLen || (maxTokens !== undefined && tokens.length + maxTokens > maxModelLen)) {
      return fail(400, overflowMessage(opts.overflowWording ?? 'current', maxModelLen, tokens.length, maxTokens));
    }

    const reply = replier.produce(messages, tools, toolChoice);
    record.kind = reply.kind;
    const budget = maxTokens ?? maxModelLen - tokens.length;
    let content = reply.content;
    let toolCalls = reply.toolCalls;
    let finishReason = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    const reasoning = reply.reasoning;
    const reasoningTokens = reasoning ? count(reasoning) : 0;
    const callTokens = toolCalls.reduce((s, c) => s + count(c.name) + count(c.arguments) + 4, 0);
    let completionTokens = reasoningTokens + count(content) + callTokens;
    if (completionTokens > budget) {
      content = replier.truncateTo(content, Math.max(0, budget - reasoningTokens));
      toolCalls = [];
      finishReason = 'length';
      completionTokens = reasoningTokens + count(content);
    }
    record.completionTokens = completionTokens;

    // The client going away cancels the sequence, as in vLLM.
    const gone = new AbortController();
    let serverDropped = false;
    res.on('close', () => {
      if (!res.writableFinished && !serverDropped) {
        record.clientClosed = true;
        stats.clientCloses++;
        gone.abort();
      }
    });

    let admitted = false;
    try {
      const a = await engine.admit(record, tokens, gone.signal);
      admitted = true;
      if (!(await engine.prefill(record, a, gone.signal))) return;
      stats.promptTokens += tokens.length;
      const usage = {
        prompt_tokens: tokens.length,
        total_tokens: tokens.length + completionTokens,
        completion_tokens: completionTokens,
        ...(opts.promptTokensDetails === false ? {} : { prompt_tokens_details: { cached_tokens: a.cachedTokens } }),
      };
      if (!stream) {
        if (!(await pause(engine.decodeMs(completionTokens), gone.signal))) return;
        const message: Record<string, unknown> = {
          role: 'assistant',
          content: content === '' && toolCalls.length > 0 ? null : content,
          tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        };
        if (reasoning) message[reasoningField] = reasoning;
        stats.completionTokens += completionTokens;
        sendJson(res, 200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason, stop_reason: null }],
          usage,
          prompt_logprobs: null,
        });
        return;
      }
      await streamReply(res, gone.signal, fault, {
        id,
        created,
        content,
        reasoning,
        toolCalls,
        finishReason,
        usage: (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage ? usage : undefined,
        onDrop: (closeSocket: boolean) => {
          serverDropped = true;
          if (closeSocket) gone.abort();
        },
      });
      if (!gone.signal.aborted && !serverDropped) stats.completionTokens += completionTokens;
    } catch (e) {
      if (!gone.signal.aborted) throw e;
    } finally {
      // The client left: abandon the response and close our half of the socket, as a real server does.
      if (gone.signal.aborted && !res.writableFinished) res.destroy();
      if (admitted || record.status === 'queued') engine.finish(record, serverDropped ? 'error' : gone.signal.aborted ? 'aborted' : 'done');
    }
  }

  async function streamReply(
    res: ServerResponse,
    signal: AbortSignal,
    fault: SimFault | undefined,
    r: {
      id: string;
      created: number;
      content: string;
      reasoning?: string;
      toolCalls: Reply['toolCalls'];
      finishReason: string;
      usage?: unknown;
      /** The server ends the request with a failure; closeSocket when the connection is being destroyed. */
      onDrop: (closeSocket: boolean) => void;
    },
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let n = 0;
    const base = { id: r.id, object: 'chat.completion.chunk', created: r.created, model };
    /** Sends one data event; false when the stream must stop (client gone or fault). */
    const send = (payload: unknown): boolean => {
      if (signal.aborted || res.destroyed) return false;
      if (fault?.dropAfterChunks !== undefined && n >= fault.dropAfterChunks) {
        log(`sim: dropping connection after ${n} chunks`);
        r.onDrop(true);
        res.socket?.destroy();
        return false;
      }
      if (fault?.errorAfterChunks !== undefined && n >= fault.errorAfterChunks) {
        // vLLM reports an engine failure after the headers as a data event, then ends the stream.
        const status = fault.status ?? 500;
        res.write(`data: ${JSON.stringify(errorBody(fault.message ?? 'EngineCore encountered an issue.', status, errorShape))}\n\n`);
        res.end('data: [DONE]\n\n');
        r.onDrop(false);
        return false;
      }
      const text = fault?.malformedChunkAt === n ? '{"id": "broken", "choices": [' : JSON.stringify(payload);
      res.write(`data: ${text}\n\n`);
      n++;
      return true;
    };
    const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }],
    });
    if (!send(delta({ role: 'assistant', content: '' }))) return;
    for (const p of r.reasoning ? replier.pieces(r.reasoning) : []) {
      if (!(await pause(engine.decodeMs(p.tokens), signal))) return;
      if (!send(delta({ [reasoningField]: p.text }))) return;
    }
    for (const p of replier.pieces(r.content)) {
      if (!(await pause(engine.decodeMs(p.tokens), signal))) return;
      if (!send(delta({ content: p.text }))) return;
    }
    for (let i = 0; i < r.toolCalls.length; i++) {
      const c = r.toolCalls[i];
      const index = fault?.noToolIndex ? undefined : fault?.toolIndexZero ? 0 : i;
      const withIndex = (o: Record<string, unknown>) => (index === undefined ? o : { index, ...o });
      if (!send(delta({ tool_calls: [withIndex({ id: c.id, type: 'function', function: { name: c.name, arguments: '' } })] }))) return;
      const argPieces = c.arguments.match(/[\s\S]{1,12}/g) ?? [];
      for (const a of argPieces) {
        if (!(await pause(engine.decodeMs(count(a)), signal))) return;
        if (!send(delta({ tool_calls: [withIndex({ function: { arguments: a } })] }))) return;
      }
    }
    if (!send(delta({}, r.finishReason))) return;
    if (r.usage && !send({ ...base, choices: [], usage: r.usage })) return;
    if (signal.aborted || res.destroyed) return;
    res.end('data: [DONE]\n\n');
  }

  // ------------------------------------------------------------ other routes

  function handleTokenize(res: ServerResponse, body: Record<string, unknown>, fault: SimFault | undefined): void {
    if (opts.tokenizeRoute === false || fault?.tokenize404) return sendJson(res, 404, { detail: 'Not Found' });
    if (body.model !== undefined && body.model !== model) return sendError(res, 404, `The model \`${String(body.model)}\` does not exist.`);
    let tokens: number[];
    if (Array.isArray(body.messages)) {
      if (body.add_generation_prompt && body.continue_final_message) {
        return sendError(res, 400, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
      }
      const tools = (Array.isArray(body.tools) ? body.tools : []) as WireTool[];
      tokens = renderTokens(tokenizer, body.messages as WireMessage[], tools, body.add_generation_prompt !== false);
    } else if (typeof body.prompt === 'string') {
      tokens = tokenizer.encode(body.prompt);
    } else {
      return sendError(res, 400, 'Either messages or prompt is required');
    }
    sendJson(res, 200, { count: tokens.length, max_model_len: maxModelLen, tokens, token_strs: null });
  }

  // ------------------------------------------------------------ dispatch

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const routeName = path === '/v1/chat/completions' ? 'chat' : path === '/tokenize' ? 'tokenize' : path === '/v1/models' ? 'models' : undefined;
    let fault: SimFault | undefined;
    try {
      fault = parseFaultHeader(req.headers['x-sim-fault']);
    } catch (e) {
      return sendError(res, 400, `Bad x-sim-fault header: ${(e as Error).message}`);
    }
    if (!fault && routeName) fault = faults.take(routeName);
    if (fault) {
      log(`sim: fault on ${path}: ${describeFault(fault)}`);
      if (fault.delayMs) await pause(fault.delayMs);
      if (fault.resetBeforeResponse) {
        req.socket.destroy();
        return;
      }
      const faultRecord = (status: RequestRecord['status'], httpStatus?: number) => {
        if (routeName !== 'chat') return;
        const r: RequestRecord = {
          id: `fault-${randomUUID()}`,
          kind: 'chat',
          stream: false,
          arrival: engine.now(),
          promptTokens: 0,
          cachedTokens: 0,
          completionTokens: 0,
          status,
          clientClosed: false,
          ...(httpStatus !== undefined ? { httpStatus, finished: engine.now() } : {}),
          fault: describeFault(fault!),
        };
        stats.requests.push(r);
        watchSocket(req.socket, r, res);
        return r;
      };
      if (fault.hang) {
        // Never answer; when the client gives up, drop our half of the connection too.
        const r = faultRecord('queued');
        res.on('close', () => {
          if (r) {
            r.clientClosed = true;
            r.status = 'aborted';
            r.finished = engine.now();
          }
          res.destroy();
        });
        return;
      }
      if (routeName === 'chat' && isStallFault(fault)) {
        const r = faultRecord('running');
        const text = await readBody(req).catch(() => '');
        const stream = (() => {
          try {
            return (JSON.parse(text) as { stream?: unknown }).stream === true;
          } catch {
            return true;
          }
        })();
        return serveStallFault(res, fault, model, stream, (clientClosed) => {
          if (!r) return;
          r.clientClosed = clientClosed;
          r.status = clientClosed ? 'aborted' : 'done';
          r.finished = engine.now();
        });
      }
      if (fault.status !== undefined && fault.errorAfterChunks === undefined) {
        const body = fault.body ?? errorBody(fault.message ?? `Injected fault (HTTP ${fault.status})`, fault.status, errorShape);
        faultRecord('error', fault.status);
        await readBody(req).catch(() => '');
        if (typeof body === 'string') {
          res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers });
          res.end(body);
        } else {
          sendJson(res, fault.status, body, fault.headers);
        }
        return;
      }
    }
    if (opts.apiKey && (path.startsWith('/v1') || path === '/tokenize')) {
      if (req.headers.authorization !== `Bearer ${opts.apiKey}`) return sendJson(res, 401, { error: 'Unauthorized' });
    }
    if (method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      return;
    }
    if (method === 'GET' && path === '/version') return sendJson(res, 200, { version: 'splitpoint-sim' });
    if (method === 'GET' && path === '/metrics') {
      const text = metricsText();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelsBody(model, maxModelLen));
    if (method === 'POST' && path === '/reset_prefix_cache') {
      engine.cache.reset();
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      return;
    }
    if (method === 'POST' && path === '/tokenize') return handleTokenize(res, parseJson(await readBody(req)), fault);
    if (method === 'POST' && path === '/v1/chat/completions') return handleChat(req.socket, res, parseJson(await readBody(req)), fault);
    sendJson(res, 404, { detail: 'Not Found' });
  }

  const sockets = new Set<Socket>();
  const busy = new Map<Socket, number>();
  const server: Server = createServer((req, res) => {
    const sock = req.socket;
    busy.set(sock, (busy.get(sock) ?? 0) + 1);
    let busyCounted = true;
    const idle = () => {
      if (!busyCounted) return;
      busyCounted = false;
      const n = (busy.get(sock) ?? 1) - 1;
      if (n <= 0) busy.delete(sock);
      else busy.set(sock, n);
    };
    res.on('close', () => {
      idle();
      sock.off('close', idle);
    });
    sock.once('close', idle);
    stats.httpInFlight++;
    stats.maxHttpInFlight = Math.max(stats.maxHttpInFlight, stats.httpInFlight);
    let counted = true;
    const done = () => {
      if (counted) {
        counted = false;
        stats.httpInFlight--;
      }
    };
    res.on('close', done);
    route(req, res).catch((e: unknown) => {
      if (e instanceof HttpError) return sendError(res, e.status, e.message, e.headers);
      log(`sim: internal error: ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) sendError(res, 500, `Internal simulator error: ${(e as Error).message}`);
      else res.destroy();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => {
      sockets.delete(s);
      busy.delete(s);
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('simulator failed to bind');
  const host = opts.host && opts.host !== '0.0.0.0' && opts.host !== '::' ? opts.host : '127.0.0.1';
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;

  return {
    url: `${origin}/v1`,
    origin,
    port: addr.port,
    model,
    maxModelLen,
    stats,
    get cache() {
      return engine.cache;
    },
    tokenizer,
    injectFault: (f) => faults.push(f),
    clearFaults: () => faults.clear(),
    queueJudgeVerdicts: (v) => {
      judgeQueue.push(...v);
    },
    setScript: (s) => {
      player = s ? new ScriptPlayer(loadScript(s)) : undefined;
    },
    resetCache: (o) => {
      if (stats.running > 0 || stats.queued > 0) throw new Error('resetCache() while requests are running');
      engine = new Engine(latency, newCache(o), stats);
    },
    resetStats: () => {
      const fresh = emptyStats();
      stats.requests.length = 0;
      Object.assign(stats, { ...fresh, requests: stats.requests, running: stats.running, queued: stats.queued, httpInFlight: stats.httpInFlight });
      stats.maxRunning = stats.running;
      stats.maxQueued = stats.queued;
      stats.maxHttpInFlight = stats.httpInFlight;
    },
    tokenize: (messages, tools, addGen = true) => renderTokens(tokenizer, messages, tools, addGen),
    metricsText,
    openSockets: () => busy.size,
    connectedSockets: () => sockets.size,
    lastChatBody: () => lastChatBody,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
