/**
 * The paced node:http transport (src/llm/pacedFetch.ts) over real HTTP: the
 * real `openai` client through VllmClient, against the simulator at time
 * scale 1 (so tokens arrive spread out as from a real server) and against a
 * hand-written SSE server for wire details the simulator does not produce.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VllmClient } from '../../src/llm/client';
import { ConnectionError, ContextOverflowError, BadRequestError, ServerError, TimeoutError } from '../../src/llm/errors';
import { createPacedFetch, type PacedFetch } from '../../src/llm/pacedFetch';
import type { ChatMessage } from '../../src/core/messages';
import { startSimulator, type SimHandle } from '../sim/server';
import { checkAbortMidStream, countingReads } from './support';

const convo: ChatMessage[] = [{ role: 'user', content: 'Summarise the design of the request scheduler in a few paragraphs.' }];

/** A long scripted reply, so that tokens keep arriving for a second or more. */
const LONG = Array.from({ length: 60 }, (_, i) => `Step ${i}: the scheduler admits waiting requests while KV blocks remain.`).join(' ');

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('paced transport against the simulator (h100-7b, time scale 1)', function () {
  this.timeout(30_000);
  let sim: SimHandle;
  let paced: PacedFetch;
  beforeEach(async () => {
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 1, streamChunkTokens: 1, script: Array(4).fill({ content: LONG }) });
    paced = createPacedFetch({ intervalMs: 100 });
  });
  afterEach(async () => {
    paced.close();
    await sim.close();
  });
  const client = (o: { idleTimeoutMs?: number; retry?: { maxRetries: number } } = {}) =>
    new VllmClient({ baseURL: sim.url, model: sim.model, fetch: paced, ...o });

  it('reads a streamed reply in ~100 ms batches: many SSE events per read, same text as non-streaming', async () => {
    // Count what the body delivers per read by wrapping the transport's Response.
    const perStream: number[] = [];
    const c = new VllmClient({ baseURL: sim.url, model: sim.model, fetch: countingReads(paced, perStream) });
    const deltas: string[] = [];
    const t0 = Date.now();
    const streamed = await c.chat({ messages: convo, maxTokens: 120 }, { onDelta: (d) => d.type === 'content' && deltas.push(d.text) });
    const wall = Date.now() - t0;
    const plain = await client().chat({ messages: convo, maxTokens: 120, stream: false });
    assert.notEqual(streamed.message.content, LONG, 'cut at max_tokens');
    assert.equal(streamed.message.content, plain.message.content);
    const tokens = streamed.usage!.completionTokens;
    assert.ok(tokens >= 60, `only ${tokens} tokens`);
    assert.ok(wall >= 300, `the reply took only ${wall} ms; the test needs tokens spread over time`);
    // One read per interval (plus the first and the last), never one per token.
    const reads = perStream[0]!;
    assert.ok(reads <= Math.ceil(wall / 100) + 3, `${reads} reads in ${wall} ms`);
    assert.ok(deltas.length >= 3 * reads, `${deltas.length} SSE events in ${reads} reads`);
    assert.equal(deltas.join(''), streamed.message.content, 'every piece still reaches onDelta, in order');
  });

  it('concurrent streams share one pacing clock: its ticks follow the wall clock, not the number of streams', async () => {
    const c = client();
    const t0 = Date.now();
    const replies = await Promise.all(Array.from({ length: 4 }, () => c.chat({ messages: convo, maxTokens: 100 })));
    const wall = Date.now() - t0;
    assert.ok(
      replies.every((r) => (r.usage?.completionTokens ?? 0) >= 40),
      replies.map((r) => r.usage?.completionTokens).join(' '),
    );
    assert.ok(wall >= 300, `only ${wall} ms`);
    const ticks = paced.pacingTicks();
    assert.ok(ticks >= 2 && ticks <= Math.ceil(wall / 100) + 2, `${ticks} ticks in ${wall} ms for 4 streams`);
  });

  it('abort mid-stream ends the call at once, the server sees the close, and no socket is left', async () => {
    await checkAbortMidStream(client(), sim, paced, convo);
  });

  it('keeps one pooled socket across sequential calls', async () => {
    const c = client();
    await c.chat({ messages: convo, maxTokens: 8 });
    await c.chat({ messages: convo, maxTokens: 8, stream: false });
    assert.equal(paced.openSockets(), 1);
  });

  it('error bodies keep their typed mapping: 400, 500, overflow, connection refused', async () => {
    sim.injectFault({ status: 400, message: 'bad things' });
    assert.ok((await failure(client().chat({ messages: convo }))) instanceof BadRequestError);
    sim.injectFault({ status: 500 });
    const e500 = await failure(client({ retry: { maxRetries: 0 } }).chat({ messages: convo }));
    assert.ok(e500 instanceof ServerError, String(e500));
    const over = await failure(client().chat({ messages: [{ role: 'user', content: 'word '.repeat(40_000) }] }));
    assert.ok(over instanceof ContextOverflowError, String(over));
    assert.equal(over.window, sim.maxModelLen);
    const port = sim.port;
    await sim.close();
    const refused = await failure(
      new VllmClient({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', fetch: paced }).chat({ messages: convo }),
    );
    assert.ok(refused instanceof ConnectionError, String(refused));
    assert.match(refused.message, /connection refused/);
    sim = await startSimulator({ timeScale: 0 });
  });
});

/** An SSE server that writes exactly the pieces given, with pauses between them. */
async function sseServer(pieces: Array<string | number>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    void (async () => {
      for (const p of pieces) {
        if (typeof p === 'number') await new Promise((r) => setTimeout(r, p));
        else res.write(p);
      }
      res.end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

const event = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\r\n\r\n`;

/** An SSE server that streams `n` one-word tokens `gapMs` apart, then stops. */
function tokenServer(n: number, gapMs: number): Promise<{ url: string; server: Server }> {
  const pieces: Array<string | number> = [];
  for (let i = 0; i < n; i++) pieces.push(event(`t${i} `), gapMs);
  pieces.push(event('', 'stop'), 'data: [DONE]\n\n');
  return sseServer(pieces);
}

describe('paced transport on the wire', function () {
  this.timeout(20_000);
  let server: Server | undefined;
  let paced: PacedFetch;
  beforeEach(() => (paced = createPacedFetch({ intervalMs: 100 })));
  afterEach(async () => {
    paced.close();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });

  it('an SSE event split across reads (mid-JSON, mid-CRLF) and keep-alive comments assemble exactly', async () => {
    const a = event('Hello, ');
    const b = event('wörld');
    const whole = a + ': keep-alive\r\n\r\n' + b + event('!', 'stop') + 'data: [DONE]\r\n\r\n';
    const cut1 = a.length + 20;
    const cut2 = whole.indexOf('\r\n\r\n', a.length + 20) + 1; // between \r and \n
    // Pauses longer than the interval, so each piece is its own read.
    const s = await sseServer([whole.slice(0, 7), 150, whole.slice(7, cut1), 150, whole.slice(cut1, cut2), 150, whole.slice(cut2)]);
    server = s.server;
    const got: string[] = [];
    const r = await new VllmClient({ baseURL: s.url, model: 'm', fetch: paced }).chat(
      { messages: convo },
      { onDelta: (d) => d.type === 'content' && got.push(d.text) },
    );
    assert.equal(r.message.content, 'Hello, wörld!');
    assert.deepEqual(got, ['Hello, ', 'wörld', '!']);
    assert.equal(r.finishReason, 'stop');
  });

  it("a request's own batch interval (deltaBatchMs) paces its stream; others keep the default", async () => {
    const s = await tokenServer(60, 20);
    server = s.server;
    const reads: number[] = [];
    const c = new VllmClient({ baseURL: s.url, model: 'm', fetch: countingReads(paced, reads) });
    const t0 = Date.now();
    const [slow, fast] = await Promise.all([
      c.chat({ messages: convo, deltaBatchMs: 400 }),
      new Promise((r) => setTimeout(r, 5)).then(() => c.chat({ messages: convo })),
    ]);
    const wall = Date.now() - t0;
    assert.equal(slow.message.content, fast.message.content);
    assert.equal(slow.message.content?.split(' ').filter(Boolean).length, 60);
    assert.ok(wall >= 1200, `${wall} ms`);
    assert.ok(reads[0]! <= Math.ceil(wall / 400) + 2, `the 400 ms stream was read ${reads[0]} times in ${wall} ms`);
    assert.ok(reads[1]! >= Math.floor(wall / 100) - 3, `the default stream was read only ${reads[1]} times in ${wall} ms`);
  });

  it('HEAD and 204 answers have no body; an abort before or while the body is read sends nothing', async () => {
    let requests = 0;
    server = createServer((req, res) => {
      requests++;
      res.writeHead(req.method === 'HEAD' ? 200 : 204, { 'content-type': 'text/event-stream' });
      res.end();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const head = await paced(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
    const empty = await paced(url, { method: 'POST', body: '{}' });
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
    assert.equal(requests, 2);
    const before = new AbortController();
    before.abort();
    assert.equal(((await failure(paced(url, { method: 'POST', body: '{}', signal: before.signal }))) as Error).name, 'AbortError');
    // A Blob body is read asynchronously: the abort lands while it is.
    const during = new AbortController();
    const p = paced(url, { method: 'POST', body: new Blob(['{}']), signal: during.signal });
    during.abort();
    assert.equal(((await failure(p)) as Error).name, 'AbortError');
    assert.equal(requests, 2, 'neither aborted request reached the server');
  });

  it('a JSON body with non-ASCII text goes out whole, its content-length in bytes', async () => {
    let got: { length: string | undefined; type: string | undefined; body: string } | undefined;
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (b: Buffer) => parts.push(b));
      req.on('end', () => {
        got = { length: req.headers['content-length'], type: req.headers['content-type'], body: Buffer.concat(parts).toString('utf8') };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }),
        );
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const text = 'Fix the parser: “naïve” → naive, 日本語のコメント, emoji 🚀, and a lone é.';
    const r = await new VllmClient({ baseURL: url, model: 'm', fetch: paced }).chat({
      messages: [{ role: 'user', content: text }],
      stream: false,
    });
    assert.equal(r.message.content, 'ok');
    assert.equal(Number(got!.length), Buffer.byteLength(got!.body), 'content-length counts bytes, not characters');
    // The body goes as bytes, to which no fetch adds a type of its own.
    assert.equal(got!.type, 'application/json');
    assert.ok(Buffer.byteLength(got!.body) > got!.body.length);
    assert.equal((JSON.parse(got!.body) as { messages: { content: string }[] }).messages.at(-1)!.content, text);
  });

  it('a batch interval given as a function is asked before each batch: a running stream follows its answer', async () => {
    // 100 tokens 25 ms apart (~2.5 s); the stream is read once a second until `fast` is set, then every 100 ms. The
    // first slow tick is on the 1 s clock's grid, 0.5-1.5 s after the first batch: the stream outlasts it.
    const s = await tokenServer(100, 25);
    server = s.server;
    let fast = false;
    let asked = 0;
    const arrivals: number[] = [];
    const t0 = Date.now();
    setTimeout(() => (fast = true), 600);
    const r = await new VllmClient({ baseURL: s.url, model: 'm', fetch: paced }).chat(
      { messages: convo, deltaBatchMs: () => (asked++, fast ? 100 : 1000) },
      { onDelta: (d) => d.type === 'content' && arrivals.push(Date.now() - t0) },
    );
    assert.equal(r.message.content?.split(' ').filter(Boolean).length, 100);
    const batches = [...new Set(arrivals)];
    assert.ok(asked >= 2, `the interval was asked ${asked} time(s)`);
    // Slow at first: nothing for at least half the 1 s interval after the first batch (the slow clock's tick falls on
    // its grid, at least half an interval after the wait; the switch at 600 ms takes effect after that tick).
    const slowTick = batches.find((t) => t > batches[0]! + 50);
    assert.ok(slowTick !== undefined && slowTick >= batches[0]! + 450, `batches at ${batches.join(', ')} ms`);
    // Then fast: batches about every 100 ms after the first slow tick.
    const afterTick = batches.filter((t) => t > slowTick + 50);
    assert.ok(afterTick.length >= 2, `batches at ${batches.join(', ')} ms`);
    assert.ok(
      afterTick.slice(1).every((t, i) => t - afterTick[i]! < 250),
      `batches at ${batches.join(', ')} ms`,
    );
  });

  it('a batch interval longer than a quarter of the idle limit is cut to it, so a held stream never looks stalled', async () => {
    const s = await tokenServer(20, 50);
    server = s.server;
    const c = new VllmClient({ baseURL: s.url, model: 'm', fetch: paced, idleTimeoutMs: 400, retry: { maxRetries: 0 } });
    const fixed = await c.chat({ messages: convo, deltaBatchMs: 10_000 });
    const asked = await c.chat({ messages: convo, deltaBatchMs: () => 10_000 });
    assert.equal(fixed.message.content?.split(' ').filter(Boolean).length, 20);
    assert.equal(asked.message.content, fixed.message.content);
  });

  it('the token-idle clock still sees tokens, at most one batch late', async () => {
    // A token every 60 ms for 1.2 s; idle limit 250 ms, over twice the batch interval.
    const s = await tokenServer(20, 60);
    server = s.server;
    const r = await new VllmClient({ baseURL: s.url, model: 'm', fetch: paced, idleTimeoutMs: 250 }).chat({ messages: convo });
    assert.equal(r.message.content?.split(' ').filter(Boolean).length, 20);
  });

  it('keep-alive comments after the reply began do not hold off the idle limit; before it, they are the queue', async () => {
    const pings = (n: number) => Array.from({ length: n }, () => [': ping\n\n', 50]).flat();
    // A gateway keeping a queued request's connection warm for 1 s, then the reply: not a stall.
    const queued = await sseServer([...pings(20), event('Hello'), event(' world'), event('', 'stop'), 'data: [DONE]\n\n']);
    server = queued.server;
    const c = (url: string) => new VllmClient({ baseURL: url, model: 'm', fetch: paced, idleTimeoutMs: 300, retry: { maxRetries: 0 } });
    assert.equal((await c(queued.url).chat({ messages: convo })).message.content, 'Hello world');
    server.close();
    // A token, then nothing but comments: a stall.
    const silent = await sseServer([event('Hi'), ...pings(40)]);
    server = silent.server;
    const t0 = Date.now();
    const e = await failure(c(silent.url).chat({ messages: convo }));
    assert.ok(e instanceof TimeoutError, String(e));
    assert.match((e as Error).message, /sent no tokens for 300 ms/);
    assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
  });
});
