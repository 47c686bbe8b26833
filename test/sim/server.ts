/**
 * The vLLM-compatible simulator: an HTTP server (node:http, no framework)
 * that answers like vLLM's OpenAI server, with a step scheduler driven by a
 * performance profile (scheduler.ts), a prefix cache, an extractive
 * summarizer, a scripted agent and fault injection. Test and demo only;
 * never shipped in the VSIX.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { VirtualClock } from './clock';
import type { SimContext } from './context';
import { FaultQueue } from './faults';
import { HttpError, sendJson } from './http';
import { metricsText as renderMetrics } from './metrics';
import { resolveProfile, type SimClock, type SimHandle, type SimOptions } from './options';
import { PrefixCache } from './prefixCache';
import { Replier, type JudgeVerdict } from './replies';
import { route } from './router';
import { Scheduler } from './scheduler';
import { loadScript, ScriptPlayer } from './script';
import { emptyStats, type RequestRecord } from './stats';
import { renderTokens } from './template';
import { makeTokenizer } from './tokenizer';
import { errorBody } from './vllmErrors';

export type { SimClock, SimHandle, SimOptions } from './options';

type CacheOpts = { pessimistic?: boolean; capacityBlocks?: number; enabled?: boolean };

export async function startSimulator(opts: SimOptions = {}): Promise<SimHandle> {
  const model = opts.model ?? 'sim-model';
  const maxModelLen = opts.maxModelLen ?? 32_768;
  const tokenizer = makeTokenizer(opts.tokenizer);
  const profile = resolveProfile(opts);
  const timeScale = opts.timeScale ?? 1;
  const errorShape = opts.errorShape ?? 'current';
  const log = opts.log ?? (() => undefined);
  const blockSize = opts.blockSize ?? 16;
  const stats = emptyStats();
  const clock = new VirtualClock(timeScale);
  const newScheduler = (o: CacheOpts = {}) => {
    const cache = new PrefixCache({
      blockSize,
      capacityBlocks: o.capacityBlocks ?? opts.cacheCapacityBlocks ?? Math.floor(profile.kvCapacityTokens / blockSize),
      pessimistic: o.pessimistic ?? opts.pessimistic ?? false,
      enabled: o.enabled ?? opts.prefixCaching ?? true,
    });
    return new Scheduler(profile, profile, cache, clock, stats);
  };
  let scheduler = newScheduler();
  let player: ScriptPlayer | undefined = opts.script ? new ScriptPlayer(loadScript(opts.script)) : undefined;
  let lastChatBody: Record<string, unknown> | undefined;
  const count = (text: string) => tokenizer.encode(text).length;
  count('warm up the tokenizer before the first request is timed');
  const judgeQueue: JudgeVerdict[] = [];
  const replier = new Replier({
    count,
    chunkTokens: Math.max(1, opts.streamChunkTokens ?? 4),
    summaryTokens: opts.summaryTokens,
    player: () => player,
    judgeQueue: () => judgeQueue,
  });
  const clockJson = (): SimClock => ({
    nowMs: clock.now(),
    timeScale,
    profile: profile.name,
    running: stats.running,
    waiting: stats.queued,
    steps: stats.steps,
    busyMs: stats.busyMs,
  });

  const ctx: SimContext = {
    opts,
    model,
    maxModelLen,
    tokenizer,
    stats,
    errorShape,
    reasoningField: opts.reasoningField ?? 'reasoning',
    replier,
    faults: new FaultQueue(),
    log,
    scheduler: () => scheduler,
    count,
    setLastChatBody: (b) => (lastChatBody = b),
    sendError: (res, status, message, headers = {}) => sendJson(res, status, errorBody(message, status, errorShape), headers),
    // Keep-alive sockets carry many requests: per-request listeners are removed
    // again once the response is over (a tick later, so a close caused by the
    // same abort is still seen), or they pile up on the socket.
    watchSocket: (socket: Socket, record: RequestRecord, res?: ServerResponse) => {
      if (socket.destroyed) {
        record.socketClosed = true;
        return;
      }
      const onClose = () => (record.socketClosed = true);
      socket.once('close', onClose);
      res?.once('close', () => setImmediate(() => socket.off('close', onClose)));
    },
    metricsText: () => renderMetrics(model, stats, scheduler.cache.stats(), opts.metricNames),
    clockJson,
  };

  const { server, sockets, busy } = httpServer(ctx);
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
    profile,
    timeScale,
    stats,
    get cache() {
      return scheduler.cache;
    },
    tokenizer,
    clock: clockJson,
    pauseScheduler: () => scheduler.pause(),
    resumeScheduler: () => scheduler.resume(),
    injectFault: (f) => ctx.faults.push(f),
    clearFaults: () => ctx.faults.clear(),
    queueJudgeVerdicts: (v) => {
      judgeQueue.push(...v);
    },
    setScript: (s) => {
      player = s ? new ScriptPlayer(loadScript(s)) : undefined;
    },
    resetCache: (o) => {
      if (!scheduler.idle) throw new Error('resetCache() while requests are running');
      scheduler = newScheduler(o);
    },
    resetStats: () => {
      const fresh = emptyStats();
      stats.requests.length = 0;
      Object.assign(stats, {
        ...fresh,
        requests: stats.requests,
        running: stats.running,
        queued: stats.queued,
        httpInFlight: stats.httpInFlight,
      });
      stats.maxRunning = stats.running;
      stats.maxQueued = stats.queued;
      stats.maxHttpInFlight = stats.httpInFlight;
    },
    tokenize: (messages, tools, addGen = true) => renderTokens(tokenizer, messages, tools, addGen),
    metricsText: ctx.metricsText,
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

/** The node:http server, counting requests in flight and the sockets that carry them. */
function httpServer(ctx: SimContext): { server: Server; sockets: Set<Socket>; busy: Map<Socket, number> } {
  const { stats } = ctx;
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
    res.on('close', () => {
      if (counted) {
        counted = false;
        stats.httpInFlight--;
      }
    });
    route(ctx, req, res).catch((e: unknown) => {
      if (e instanceof HttpError) return ctx.sendError(res, e.status, e.message, e.headers);
      ctx.log(`sim: internal error: ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) ctx.sendError(res, 500, `Internal simulator error: ${(e as Error).message}`);
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
  return { server, sockets, busy };
}
