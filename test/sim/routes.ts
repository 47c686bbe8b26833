/**
 * The route table. A route is one line here; its handler lives in its own
 * file when it is more than a few lines (chat.ts, tokenize.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleChat } from './chat';
import type { SimContext } from './context';
import type { SimFault } from './faults';
import { parseJson, readBody, sendJson } from './http';
import { modelsBody } from './models';
import { handleTokenize } from './tokenize';
import { handleEmbeddings } from './embeddings';

export interface RouteArgs {
  ctx: SimContext;
  req: IncomingMessage;
  res: ServerResponse;
  fault: SimFault | undefined;
  /** The JSON object body (400 if it is not one). */
  body(): Promise<Record<string, unknown>>;
}

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  /** Queued faults of this kind apply to it (sim.injectFault({route})). */
  faultRoute?: 'chat' | 'tokenize' | 'models';
  handle(a: RouteArgs): Promise<void> | void;
}

function empty200(res: ServerResponse): void {
  res.writeHead(200, { 'content-length': '0' });
  res.end();
}

export const ROUTES: Route[] = [
  { method: 'GET', path: '/health', handle: ({ res }) => empty200(res) },
  { method: 'GET', path: '/version', handle: ({ res }) => sendJson(res, 200, { version: 'splitpoint-sim' }) },
  {
    method: 'GET',
    path: '/metrics',
    handle: ({ ctx, res }) => {
      const text = ctx.metricsText();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    },
  },
  {
    method: 'GET',
    path: '/v1/models',
    faultRoute: 'models',
    handle: ({ ctx, res }) => sendJson(res, 200, modelsBody(ctx.model, ctx.maxModelLen)),
  },
  {
    method: 'POST',
    path: '/reset_prefix_cache',
    // 200 whether or not the cache was reset, as vLLM's route answers.
    handle: ({ ctx, res }) => {
      ctx.scheduler().cache.reset();
      empty200(res);
    },
  },
  { method: 'POST', path: '/tokenize', faultRoute: 'tokenize', handle: async (a) => handleTokenize(a.ctx, a.res, await a.body(), a.fault) },
  {
    method: 'POST',
    path: '/v1/chat/completions',
    faultRoute: 'chat',
    handle: async (a) => handleChat(a.ctx, a.req.socket, a.res, await a.body(), a.fault),
  },
  { method: 'POST', path: '/v1/embeddings', handle: async (a) => handleEmbeddings(a.ctx, a.res, await a.body()) },
  // Simulator-only: simulated time, and the per-request log with simulated times.
  { method: 'GET', path: '/sim/clock', handle: ({ ctx, res }) => sendJson(res, 200, ctx.clockJson()) },
  { method: 'GET', path: '/sim/stats', handle: ({ ctx, res }) => sendJson(res, 200, statsJson(ctx)) },
];

function statsJson(ctx: SimContext) {
  const { ttft: _t, tpot: _p, e2e: _e, ...counters } = ctx.stats;
  (void _t, _p, _e);
  return { clock: ctx.clockJson(), ...counters };
}

export function findRoute(method: string, path: string): Route | undefined {
  return ROUTES.find((r) => r.method === method && r.path === path);
}

export function jsonBody(req: IncomingMessage): () => Promise<Record<string, unknown>> {
  return async () => parseJson(await readBody(req));
}
