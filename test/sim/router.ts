/**
 * Dispatch: fault injection first (header or queue), then the API key, then
 * the route table (routes.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context';
import { describeFault, parseFaultHeader, type SimFault } from './faults';
import { isStallFault, serveStallFault } from './stallFaults';
import { readBody, sendJson, sleep } from './http';
import { findRoute, jsonBody, ROUTES } from './routes';
import type { RequestRecord } from './stats';
import { errorBody } from './vllmErrors';

export async function route(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const found = findRoute(method, path);
  // Queued faults match by path whatever the method, as before the route table.
  const faultRoute = found?.faultRoute ?? ROUTES.find((r) => r.path === path)?.faultRoute;
  let fault: SimFault | undefined;
  try {
    fault = parseFaultHeader(req.headers['x-sim-fault']);
  } catch (e) {
    return ctx.sendError(res, 400, `Bad x-sim-fault header: ${(e as Error).message}`);
  }
  if (!fault && faultRoute) fault = ctx.faults.take(faultRoute);
  if (fault && (await answerFault(ctx, req, res, fault, faultRoute === 'chat'))) return;
  const apiKey = ctx.opts.apiKey;
  if (apiKey && (path.startsWith('/v1') || path === '/tokenize') && req.headers.authorization !== `Bearer ${apiKey}`) {
    return sendJson(res, 401, { error: 'Unauthorized' });
  }
  if (!found) return sendJson(res, 404, { detail: 'Not Found' });
  await found.handle({ ctx, req, res, fault, body: jsonBody(req) });
}

/** Applies a fault's own answer; true when the request is fully handled (or never will be). */
async function answerFault(ctx: SimContext, req: IncomingMessage, res: ServerResponse, fault: SimFault, chat: boolean): Promise<boolean> {
  const now = () => ctx.scheduler().clock.now();
  ctx.log(`sim: fault on ${req.url}: ${describeFault(fault)}`);
  if (fault.delayMs) await sleep(fault.delayMs);
  if (fault.resetBeforeResponse) {
    req.socket.destroy();
    return true;
  }
  const faultRecord = (status: RequestRecord['status'], httpStatus?: number) => {
    if (!chat) return undefined;
    const r: RequestRecord = {
      id: `fault-${randomUUID()}`,
      kind: 'chat',
      stream: false,
      arrival: now(),
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      status,
      clientClosed: false,
      ...(httpStatus !== undefined ? { httpStatus, finished: now() } : {}),
      fault: describeFault(fault),
    };
    ctx.stats.requests.push(r);
    ctx.watchSocket(req.socket, r, res);
    return r;
  };
  if (fault.hang) {
    // Never answer; when the client gives up, drop our half of the connection too.
    const r = faultRecord('queued');
    res.on('close', () => {
      if (r) {
        r.clientClosed = true;
        r.status = 'aborted';
        r.finished = now();
      }
      res.destroy();
    });
    return true;
  }
  if (chat && isStallFault(fault)) {
    const r = faultRecord('running');
    const text = await readBody(req).catch(() => '');
    let stream = true;
    try {
      stream = (JSON.parse(text) as { stream?: unknown }).stream === true;
    } catch {
      // not JSON: stream, like the default
    }
    await serveStallFault(res, fault, ctx.model, stream, (clientClosed) => {
      if (!r) return;
      r.clientClosed = clientClosed;
      r.status = clientClosed ? 'aborted' : 'done';
      r.finished = now();
    });
    return true;
  }
  if (fault.status !== undefined && fault.errorAfterChunks === undefined) {
    const body = fault.body ?? errorBody(fault.message ?? `Injected fault (HTTP ${fault.status})`, fault.status, ctx.errorShape);
    faultRecord('error', fault.status);
    await readBody(req).catch(() => '');
    if (typeof body === 'string') {
      res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers });
      res.end(body);
    } else {
      sendJson(res, fault.status, body, fault.headers);
    }
    return true;
  }
  return false;
}
