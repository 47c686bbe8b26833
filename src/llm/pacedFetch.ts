/**
 * A `fetch` for the openai SDK, built on node:http, that reads streamed
 * (text/event-stream) bodies in batches. A vLLM server sends one SSE event
 * per token per request; with many compaction workers that is hundreds to
 * thousands of network reads a second, and Node's fetch (undici) spends about
 * 90 µs on each. Here a streamed body is read at most once per `intervalMs`:
 * between reads the response is paused, and because our sockets have a
 * one-byte high-water mark the pause reaches the socket, which stops reading,
 * so the kernel buffers the events and the next read drains them all at once.
 * Tokens therefore reach the caller (and the token-idle clock) at most one
 * interval late; the UI only repaints about ten times a second anyway.
 * Other bodies (JSON) are passed through as they arrive.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { pacedBody } from './pacedBody';

export interface PacedFetchOptions {
  /** Longest a streamed body is left unread, in ms (default 100). 0 reads as data arrives. */
  intervalMs?: number;
}

export type PacedFetch = typeof fetch & {
  /** Closes idle keep-alive sockets (tests, shutdown). */
  close(): void;
  /** Sockets open or pooled (tests check that aborts leak none). */
  openSockets(): number;
};

/** The one-byte mark makes a paused response stop the socket's reads (see above). */
const SOCKET_OPTIONS = { readableHighWaterMark: 1 };

class PacedHttpAgent extends http.Agent {
  override createConnection(options: http.ClientRequestArgs): Duplex {
    return net.createConnection({ ...(options as net.NetConnectOpts), ...SOCKET_OPTIONS });
  }
}

class PacedHttpsAgent extends https.Agent {
  override createConnection(options: https.RequestOptions): Duplex {
    return tls.connect({ ...(options as tls.ConnectionOptions), ...SOCKET_OPTIONS });
  }
}

export function createPacedFetch(opts: PacedFetchOptions = {}): PacedFetch {
  const intervalMs = opts.intervalMs ?? 100;
  const agents = { http: new PacedHttpAgent({ keepAlive: true }), https: new PacedHttpsAgent({ keepAlive: true }) };
  const paced = (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof Request !== 'undefined' && input instanceof Request) throw new TypeError('pacedFetch takes a URL, not a Request');
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`pacedFetch cannot fetch ${url.protocol} URLs`);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortError(signal);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = await requestBody(init.body);
    if (body && headers['content-length'] === undefined) headers['content-length'] = String(body.byteLength);
    const secure = url.protocol === 'https:';
    const request = (secure ? https.request : http.request) as typeof http.request;
    const req = request(url, { method: init.method ?? 'GET', headers, agent: secure ? agents.https : agents.http });
    const onAbort = () => req.destroy(abortError(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal?.removeEventListener('abort', onAbort));
    return new Promise<Response>((resolve, reject) => {
      req.once('error', reject);
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        const noBody = init.method === 'HEAD' || status === 204 || status === 205 || status === 304;
        const streamed = /^text\/event-stream/i.test(String(res.headers['content-type'] ?? ''));
        const stream = noBody ? null : pacedBody(req, res, streamed ? intervalMs : 0);
        if (noBody) res.resume();
        resolve(new Response(stream, { status, statusText: res.statusMessage, headers: responseHeaders(res.rawHeaders) }));
      });
      req.end(body);
    });
  }) as PacedFetch;
  paced.close = () => {
    agents.http.destroy();
    agents.https.destroy();
  };
  paced.openSockets = () => countSockets(agents.http) + countSockets(agents.https);
  return paced;
}

let shared: PacedFetch | undefined;

/** One pooled transport per process, shared by every client that does not bring its own fetch. */
export function sharedPacedFetch(): PacedFetch {
  return (shared ??= createPacedFetch());
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('This operation was aborted', 'AbortError');
}

async function requestBody(b: RequestInit['body']): Promise<Buffer | undefined> {
  if (b === undefined || b === null) return undefined;
  if (typeof b === 'string') return Buffer.from(b);
  if (b instanceof ArrayBuffer) return Buffer.from(b);
  if (ArrayBuffer.isView(b)) return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (b instanceof URLSearchParams) return Buffer.from(b.toString());
  // Blobs, forms and streams: let the platform serialise them.
  return Buffer.from(await new Response(b as ConstructorParameters<typeof Response>[0]).arrayBuffer());
}

function responseHeaders(raw: string[]): Headers {
  const h = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      h.append(raw[i]!, raw[i + 1]!);
    } catch {
      // a header value Headers refuses (non-ASCII); the SDK reads none of those
    }
  }
  return h;
}

function countSockets(agent: http.Agent): number {
  let n = 0;
  for (const list of [...Object.values(agent.sockets), ...Object.values(agent.freeSockets)]) n += list?.length ?? 0;
  return n;
}
