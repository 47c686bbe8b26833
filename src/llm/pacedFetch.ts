/**
 * A `fetch` for the openai SDK, built on node:http, that reads streamed
 * (text/event-stream) bodies in batches. A vLLM server sends one SSE event
 * per token per request; read as they arrive, that is one process wake-up
 * per token per worker, and a wake-up is the costly part (Node's fetch spends
 * about 90 µs per event in all). Here a streamed body is read at most once
 * per `intervalMs`: between reads the response is paused and its socket held,
 * which stops the kernel read (pacedSocket.ts), so the events wait in the
 * kernel; one clock per interval, shared by every stream on it
 * (pacingClock.ts), resumes them all in one turn of the event loop, and the
 * clocks tick on one grid, so those of a 250 ms, a 500 ms and a 1 s stream
 * wake the process together. Tokens therefore reach the caller (and the
 * token-idle clock) about one interval late (at most one and a half, on the
 * first batch); the UI only repaints about ten times a second anyway. Other
 * bodies (JSON) are passed through as they arrive. A request tagged by
 * watchArrivals() also has its bytes timed as the socket reads them, for the
 * learned profile (timing.ts), which the batches' times would teach the grid.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { DirectRoutes } from './directRoutes';
import { pacedBody } from './pacedBody';
import { PacingClock } from './pacingClock';

export interface PacedFetchOptions {
  /** Longest a streamed body is left unread, in ms (default 100). 0 reads as data arrives. */
  intervalMs?: number;
  /** TLS options for https URLs, such as `ca` for a server whose certificate authority Node does not know. */
  tls?: Pick<https.AgentOptions, 'ca'>;
}

/** What a caller may add to a request's init: its own batch interval for a streamed body (other fetches ignore it). */
export interface PacedRequestInit {
  /** A function is asked before each batch: the stream moves to the clock of its current answer. */
  paceMs?: number | (() => number);
}

export type PacedFetch = typeof fetch & {
  /** Closes idle keep-alive sockets (tests, shutdown). */
  close(): void;
  /** Sockets open or pooled (tests check that aborts leak none). */
  openSockets(): number;
  /** Times the pacing clocks have woken the process (tests: streams share their ticks). */
  pacingTicks(): number;
  /** Streamed responses whose socket was held between batches (tests: whoever's agent made the socket). */
  heldStreams(): number;
  /** Origins whose plain-http requests go past an editor's proxy support now (directRoutes.ts; tests). */
  directOrigins(): number;
};

export function createPacedFetch(opts: PacedFetchOptions = {}): PacedFetch {
  const intervalMs = opts.intervalMs ?? 100;
  // One clock per interval in use: every stream paced at 100 ms shares one timer, every one at 250 ms another.
  const clocks = new Map<number, PacingClock>();
  const clockFor = (ms: number) => {
    if (ms <= 0) return undefined;
    let c = clocks.get(ms);
    if (!c) clocks.set(ms, (c = new PacingClock(ms)));
    return c;
  };
  // Plain agents: holding works on any socket (pacedSocket.ts), which matters because VS Code's proxy support
  // replaces the agent of a request to any host but localhost with its own.
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ ...opts.tls, keepAlive: true }) };
  let held = 0;
  const onHeld = () => void held++;
  const routes = new DirectRoutes();
  const paced = (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof Request !== 'undefined' && input instanceof Request) throw new TypeError('pacedFetch takes a URL, not a Request');
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`pacedFetch cannot fetch ${url.protocol} URLs`);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortError(signal);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    // The tag is ours, not the server's: it only names where the arrival times go.
    const watch = headers[ARRIVALS_HEADER] === undefined ? undefined : watches.get(headers[ARRIVALS_HEADER]);
    delete headers[ARRIVALS_HEADER];
    const body = await requestBody(init.body);
    // Aborted while the body was read: the abort listener added below would never fire.
    if (signal?.aborted) throw abortError(signal);
    if (body !== undefined && headers['content-length'] === undefined)
      headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    const method = init.method ?? 'GET';
    const secure = url.protocol === 'https:';
    const options = { method, headers, agent: secure ? agents.https : agents.http };
    // http.request itself may be an editor's proxy support (VS Code); its own ClientRequest is not. HTTPS always goes
    // through the proxy support, which also adds the system's certificate authorities.
    let req: http.ClientRequest;
    if (secure) req = https.request(url, options);
    else if (routes.isDirect(url.origin)) req = new http.ClientRequest({ ...urlToHttpOptions(url), ...options });
    else routes.observe((req = http.request(url, options)), url.origin);
    if (signal) abortOn(signal, req);
    const clock = intervalMs > 0 ? pacingOf((init as PacedRequestInit).paceMs, intervalMs, clockFor) : undefined;
    if (watch) timeRequest(req, watch);
    const response = responseOf(req, method, clock, onHeld, watch);
    // Written here, not in a closure: no callback that lives as long as the stream holds the request's body, which
    // would otherwise be kept for the whole reply.
    req.end(body);
    return response;
  }) as PacedFetch;
  paced.close = () => {
    agents.http.destroy();
    agents.https.destroy();
  };
  paced.openSockets = () => countSockets(agents.http) + countSockets(agents.https);
  paced.pacingTicks = () => [...clocks.values()].reduce((n, c) => n + c.ticks, 0);
  paced.heldStreams = () => held;
  paced.directOrigins = () => routes.size;
  return paced;
}

let shared: PacedFetch | undefined;

/** One pooled transport per process, shared by every client that does not bring its own fetch. */
export function sharedPacedFetch(): PacedFetch {
  return (shared ??= createPacedFetch());
}

/** The clock to wait on after each batch, asked again every time (a function's answer may change while the stream runs). */
function pacingOf(
  asked: PacedRequestInit['paceMs'],
  intervalMs: number,
  clockFor: (ms: number) => PacingClock | undefined,
): () => PacingClock | undefined {
  return () => {
    const v = typeof asked === 'function' ? asked() : asked;
    return clockFor(typeof v === 'number' && v > 0 ? v : intervalMs);
  };
}

function abortOn(signal: AbortSignal, req: http.ClientRequest): void {
  const onAbort = () => req.destroy(abortError(signal));
  signal.addEventListener('abort', onAbort, { once: true });
  req.once('close', () => signal.removeEventListener('abort', onAbort));
}

/** The response as a fetch Response; a streamed body is paced on `clock` when one is given. */
function responseOf(
  req: http.ClientRequest,
  method: string,
  clock: (() => PacingClock | undefined) | undefined,
  onHeld: () => void,
  watch: StreamArrivals | undefined,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      const noBody = method === 'HEAD' || status === 204 || status === 205 || status === 304;
      const streamed = /^text\/event-stream/i.test(String(res.headers['content-type'] ?? ''));
      const paced = streamed && watch && !noBody ? timeStream(res, clock, watch) : clock;
      const stream = noBody ? null : pacedBody(req, res, streamed ? paced : undefined, onHeld);
      if (noBody) res.resume();
      resolve(new Response(stream, { status, statusText: res.statusMessage, headers: responseHeaders(res.rawHeaders) }));
    });
  });
}

/** Between these two times (performance.now()) the bytes reached the socket. */
export interface Arrival {
  earliest: number;
  latest: number;
}

/** What the transport saw of a watched request (the last attempt's times when it was sent again). */
export interface StreamArrivals {
  /** Times the request was sent: a retry sends it again. */
  requests: number;
  /** When its body was handed to the socket. */
  sent?: number;
  /** The streamed reply's first SSE data (vLLM sends its first event with the first token). */
  first?: Arrival;
  /** The reply's latest bytes: once it has been read, its last ([DONE] comes with the last token). */
  end?: Arrival;
}

/** The request header that names a watch; the transport takes it off before sending. */
export const ARRIVALS_HEADER = 'x-splitpoint-arrivals';
const watches = new Map<string, StreamArrivals>();
let watchSeq = 0;

/**
 * Records when the bytes of requests sent with `header` reached the socket, until `stop()`. A transport other than
 * this one sends the header on (harmless) and records nothing: `arrivals.requests` stays 0.
 */
export function watchArrivals(): { header: Record<string, string>; arrivals: StreamArrivals; stop(): void } {
  const id = String(++watchSeq);
  const arrivals: StreamArrivals = { requests: 0 };
  watches.set(id, arrivals);
  return { header: { [ARRIVALS_HEADER]: id }, arrivals, stop: () => void watches.delete(id) };
}

function timeRequest(req: http.ClientRequest, w: StreamArrivals): void {
  w.requests++;
  w.sent = w.first = w.end = undefined;
  // 'finish': the whole body is with the kernel (a new connection's handshake and a long prompt's upload are not the server's).
  req.once('finish', () => (w.sent = performance.now()));
}

/**
 * Times a streamed body's bytes as the socket reads them. Until the first batch ends the socket reads as data
 * comes, so the first event's time is exact; after that, bytes wait in the kernel while the socket is held and are
 * read at the clock's tick, so they are known only to have come between the hold (when the clock was asked, just
 * before holding) and the read. Returns the clock function to pace on, which notes each hold.
 */
function timeStream(
  res: http.IncomingMessage,
  clock: (() => PacingClock | undefined) | undefined,
  w: StreamArrivals,
): (() => PacingClock | undefined) | undefined {
  let heldAt: number | undefined;
  // Not on 'end': the reader cancels the body at [DONE], which may come before the chunked body's last bytes.
  res.on('data', (b: Buffer) => {
    const t = performance.now();
    w.end = { earliest: heldAt ?? t, latest: t };
    // A keep-alive comment a proxy sends before the first token is not the first token.
    if (!w.first && b.includes('data:')) w.first = w.end;
  });
  if (!clock) return undefined;
  return () => {
    const c = clock();
    heldAt = c ? performance.now() : undefined;
    return c;
  };
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('This operation was aborted', 'AbortError');
}

/** A string body is written as it is (the socket encodes it); bytes (the client's chat bodies) go without a copy. */
async function requestBody(b: RequestInit['body']): Promise<Buffer | string | undefined> {
  if (b === undefined || b === null) return undefined;
  if (typeof b === 'string') return b;
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
