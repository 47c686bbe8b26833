/**
 * Every failure the client must classify, retry or surface, produced by the
 * simulator over real HTTP.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '../../src/cli/endpoint';
import { VllmClient, type VllmClientOptions } from '../../src/llm/client';
import {
  AbortedError,
  AuthError,
  BadRequestError,
  ConnectionError,
  ContextOverflowError,
  type LlmError,
  NotFoundError,
  ProtocolError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../src/llm/errors';
import { backoffDelay, DEFAULT_RETRY_POLICY } from '../../src/llm/retry';
import type { ChatDelta } from '../../src/llm/types';
import type { ChatMessage } from '../../src/core/messages';
import { startSimulator, type SimHandle, type SimOptions } from '../sim/server';
import { until } from './support';

const convo: ChatMessage[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Please summarise the design of the retry loop in src/llm/retry.ts for me today.' },
];

async function rejectsWith<T extends LlmError>(p: Promise<unknown>, cls: abstract new (...a: never[]) => T): Promise<T> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
    return e as T;
  }
  assert.fail(`expected ${cls.name}, but it resolved`);
}

describe('VllmClient failures against the simulator', () => {
  let sim: SimHandle;
  let sleeps: number[];
  const start = async (o: SimOptions = {}) => {
    sim = await startSimulator({ timeScale: 0, ...o });
    return sim;
  };
  /** A client with recorded, instant backoff sleeps and fixed jitter. */
  const client = (o: Partial<VllmClientOptions> = {}) =>
    new VllmClient({
      baseURL: sim.url,
      model: sim.model,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      ...o,
    });
  beforeEach(() => {
    sleeps = [];
  });
  afterEach(async () => {
    await sim?.close();
  });

  for (const stream of [true, false]) {
    it(`context overflow → ContextOverflowError with window and input (${stream ? 'stream' : 'non-stream'}), not retried`, async () => {
      await start({ tokenizer: 'char', maxModelLen: 300 });
      const big: ChatMessage[] = [{ role: 'user', content: 'z'.repeat(400) }];
      const e = await rejectsWith(client().chat({ messages: big, stream }), ContextOverflowError);
      assert.equal(e.window, 300);
      // A current vLLM counts one token past the room (300 − 0 + 1) and says "at least": a bound, not the size.
      assert.ok(sim.tokenize(big).length > 301);
      assert.deepEqual([e.input, e.inputAtLeast], [undefined, 301]);
      assert.match(e.message, /the prompt has at least 301 tokens but the model's window is 300/);
      assert.equal(e.status, 400);
      assert.equal(e.attempts, 1);
      assert.deepEqual(sleeps, []);
    });
  }

  for (const wording of ['v0.10', 'legacy', 'v1-decoder'] as const) {
    it(`parses the ${wording} overflow wording in vLLM's legacy error body`, async () => {
      await start({ tokenizer: 'char', maxModelLen: 100, overflowWording: wording, errorShape: 'legacy' });
      const big: ChatMessage[] = [{ role: 'user', content: 'q'.repeat(150) }];
      const e = await rejectsWith(client().chat({ messages: big }), ContextOverflowError);
      assert.equal(e.window, 100);
      assert.equal(e.input, sim.tokenize(big).length);
      assert.deepEqual((e.body as { object?: string }).object, 'error');
    });
  }

  it('prompt fits but max_tokens does not → overflow with the requested total', async () => {
    await start({ tokenizer: 'char', maxModelLen: 300 });
    const msgs: ChatMessage[] = [{ role: 'user', content: 'y'.repeat(200) }];
    const e = await rejectsWith(client().chat({ messages: msgs, maxTokens: 200 }), ContextOverflowError);
    const input = sim.tokenize(msgs).length;
    // A current vLLM counts only up to the room left for the prompt plus one (300 − 200 + 1), and says "at least".
    assert.ok(input > 101);
    assert.deepEqual([e.input, e.inputAtLeast], [undefined, 101]);
    await sim.close();
    await start({ tokenizer: 'char', maxModelLen: 300, overflowWording: 'v0.10' });
    const exact = await rejectsWith(client().chat({ messages: msgs, maxTokens: 200 }), ContextOverflowError);
    assert.deepEqual([exact.input, exact.requested], [input, input + 200]);
  });

  it('429 with Retry-After: waits exactly as told, then succeeds', async () => {
    await start();
    sim.injectFault({ status: 429, message: 'Too many requests', headers: { 'retry-after': '2' } });
    const r = await client().chat({ messages: convo });
    assert.equal(r.attempts, 2);
    assert.deepEqual(sleeps, [2000]);
    assert.match(r.message.content ?? '', /^Acknowledged/);
  });

  it('503 twice then success: exponential backoff with jitter from the policy', async () => {
    await start();
    sim.injectFault({ status: 503, times: 2 });
    const retries: number[] = [];
    const r = await client({ onRetry: (i) => retries.push(i.retry) }).chat({ messages: convo });
    assert.equal(r.attempts, 3);
    const expected = [1, 2].map((n) => backoffDelay(n, DEFAULT_RETRY_POLICY, () => 0.5));
    assert.deepEqual(sleeps, expected);
    assert.ok(expected[1] > expected[0], 'exponential');
    assert.deepEqual(retries, [1, 2]);
  });

  it('500 forever: gives up after maxRetries with ServerError carrying the attempt count', async () => {
    await start();
    sim.injectFault({ status: 500, times: 10, message: 'engine died' });
    const e = await rejectsWith(client({ retry: { maxRetries: 2 } }).chat({ messages: convo }), ServerError);
    assert.equal(e.attempts, 3);
    assert.equal(sleeps.length, 2);
    assert.match(e.message, /engine died/);
    assert.equal(sim.stats.requests.filter((r) => r.httpStatus === 500).length, 3);
  });

  it('a Retry-After beyond the cap is not waited for', async () => {
    await start();
    sim.injectFault({ status: 429, headers: { 'retry-after': '3600' } });
    const e = await rejectsWith(client().chat({ messages: convo }), RateLimitedError);
    assert.equal(e.retryAfterMs, 3_600_000);
    assert.deepEqual(sleeps, []);
  });

  it('a 400 is never retried; a bad model is NotFoundError; a bad key is AuthError', async () => {
    await start({ apiKey: 'k1' });
    sim.injectFault({ status: 400, message: 'temperature must be non-negative' });
    const bad = await rejectsWith(client({ apiKey: 'k1' }).chat({ messages: convo }), BadRequestError);
    assert.match(bad.message, /temperature must be non-negative/);
    assert.equal(bad.attempts, 1);
    const nf = await rejectsWith(client({ apiKey: 'k1' }).chat({ messages: convo, model: 'nope' }), NotFoundError);
    assert.match(nf.message, /does not exist/);
    const auth = await rejectsWith(client().chat({ messages: convo }), AuthError);
    assert.equal(auth.status, 401);
    assert.deepEqual(sleeps, []);
  });

  it("a gateway that echoes the key in its 401 body: the error's message names the failure, never the key", async () => {
    await start({ apiKey: 'k1-secret-key-for-this-test' });
    const key = 'k1-wrong-key-echoed-back';
    sim.injectFault({ status: 401, message: `invalid api key ${key} (header was "Authorization: Bearer ${key}")` });
    const e = await rejectsWith(client({ apiKey: key }).chat({ messages: convo }), AuthError);
    assert.ok(!e.message.includes(key), e.message);
    assert.ok(!e.stack?.includes(key), 'nor in the stack a log would print');
    assert.match(e.message, /invalid api key \[redacted\]/);
    // The probe's and the model list's errors too (the side bar shows the probe's).
    sim.injectFault({ status: 401, route: 'models', message: `invalid api key ${key}` });
    const listed = await rejectsWith(client({ apiKey: key }).listModels(), AuthError);
    assert.ok(!listed.message.includes(key), listed.message);
  });

  it('connection refused → ConnectionError naming the URL and how to start vLLM, without retrying', async () => {
    await start();
    const url = sim.url;
    await sim.close();
    const c = new VllmClient({ baseURL: url, model: 'm', sleep: async (ms) => void sleeps.push(ms) });
    const e = await rejectsWith(c.chat({ messages: convo }), ConnectionError);
    assert.equal(e.code, 'ECONNREFUSED');
    assert.ok(e.message.includes(url), e.message);
    assert.match(e.message, /vllm serve .*--enable-prefix-caching.*--enable-auto-tool-choice --tool-call-parser/);
    assert.match(e.message, new RegExp(`--port ${new URL(url).port}`));
    assert.deepEqual(sleeps, []);
    await rejectsWith(c.listModels(), ConnectionError);
    // a port fetch refuses outright still gets a message that says what to do
    const blocked = await rejectsWith(
      new VllmClient({ baseURL: 'http://127.0.0.1:9/v1', model: 'm' }).chat({ messages: convo }),
      ConnectionError,
    );
    assert.match(blocked.message, /127\.0\.0\.1:9\/v1/);
    assert.match(blocked.message, /vllm serve/);
  });

  it('a server that never answers → TimeoutError, and the socket is closed', async () => {
    await start();
    sim.injectFault({ hang: true });
    const e = await rejectsWith(client({ timeoutMs: 150 }).chat({ messages: convo }), TimeoutError);
    assert.equal(e.timeoutMs, 150);
    const rec = sim.stats.requests[0];
    await until(() => rec.socketClosed === true);
    assert.equal(rec.clientClosed, true, 'the client hung up, not the server');
    assert.equal(sim.stats.httpInFlight, 0, 'no connection is left carrying a request');
  });

  it('a stream that goes silent after its first tokens → TimeoutError from the idle timer', async () => {
    await start({ profile: 'unit', timeScale: 1 }); // 10 ms per step
    let tokens = 0;
    const onDelta = (d: ChatDelta) => {
      // The server stops stepping once tokens flow: the stream stays open and sends nothing more.
      if (d.type === 'content' && tokens++ === 0) sim.pauseScheduler();
    };
    const e = await rejectsWith(client({ idleTimeoutMs: 300 }).chat({ messages: convo }, { onDelta }), TimeoutError);
    assert.equal(e.timeoutMs, 300);
    assert.ok(tokens >= 1, 'the timeout came after tokens had arrived, not during the prefill');
    await until(() => sim.stats.requests[0]?.clientClosed === true);
    sim.resumeScheduler();
  });

  it('a request queued longer than the idle limit is not a stall: the idle clock starts at the first event of the reply', async () => {
    await start({ profile: 'unit', timeScale: 1 });
    // The server takes the request (its headers go out at once, as vLLM's do) but schedules nothing: a busy queue.
    sim.pauseScheduler();
    const queuedMs = 900;
    const resume = setTimeout(() => sim.resumeScheduler(), queuedMs);
    const t0 = Date.now();
    try {
      const r = await client({ idleTimeoutMs: 300 }).chat({ messages: convo });
      assert.ok(Date.now() - t0 >= queuedMs - 50, `answered after ${Date.now() - t0} ms`);
      assert.ok((r.message.content ?? '').length > 0);
      assert.equal(r.attempts, 1, 'not stopped and retried');
    } finally {
      clearTimeout(resume);
      sim.resumeScheduler();
    }
  });

  it('a reply that never begins ends at the deadline, which says the server had not started it', async () => {
    await start({ profile: 'unit', timeScale: 1 });
    sim.pauseScheduler();
    try {
      const e = await rejectsWith(client({ idleTimeoutMs: 200, timeoutMs: 700 }).chat({ messages: convo }), TimeoutError);
      assert.match(e.message, /did not finish within 700 ms; it was stopped\. The server had not started its reply: it may be queueing/);
      await until(() => sim.stats.requests[0]?.clientClosed === true);
    } finally {
      sim.resumeScheduler();
    }
  });

  it('abort mid-stream cancels the HTTP request: the server sees the client close, frees the sequence, no socket left', async () => {
    await start({ profile: 'unit', timeScale: 3 }); // 30 ms per step
    const ctl = new AbortController();
    const deltas: ChatDelta[] = [];
    const p = client().chat(
      { messages: convo },
      {
        signal: ctl.signal,
        onDelta: (d) => {
          deltas.push(d);
          if (d.type === 'content') ctl.abort();
        },
      },
    );
    const e = await rejectsWith(p, AbortedError);
    assert.equal(e.attempts, 1);
    assert.ok(deltas.length >= 1);
    await until(() => sim.stats.requests[0]?.status === 'aborted');
    assert.equal(sim.stats.requests[0].clientClosed, true);
    assert.equal(sim.stats.running, 0, 'the sequence was freed');
    assert.equal(sim.cache.stats().usedBlocks, 0, 'its KV blocks were released');
    await until(() => sim.stats.requests[0].socketClosed === true);
    assert.equal(sim.stats.httpInFlight, 0, 'no connection is left carrying a request');
    assert.equal(sim.openSockets(), 0, 'no busy socket left');
    assert.deepEqual(sleeps, []);
  });

  it('abort while queued behind max-num-seqs: the request leaves the queue', async () => {
    await start({ profile: 'unit', timeScale: 2, maxNumSeqs: 1 }); // 20 ms per step
    const c = client();
    const first = c.chat({ messages: convo });
    await until(() => sim.stats.running === 1);
    const ctl = new AbortController();
    const second = c.chat({ messages: convo }, { signal: ctl.signal });
    await until(() => sim.stats.queued === 1);
    ctl.abort();
    await rejectsWith(second, AbortedError);
    await until(() => sim.stats.queued === 0);
    await first;
    assert.equal(sim.stats.requests[1].status, 'aborted');
    assert.equal(sim.stats.requests[1].admitted, undefined);
  });

  it('an already-aborted signal fails fast without a request', async () => {
    await start();
    const ctl = new AbortController();
    ctl.abort();
    await rejectsWith(client().chat({ messages: convo }, { signal: ctl.signal }), AbortedError);
    assert.equal(sim.stats.requests.length, 0);
  });

  it('connection dropped mid-stream: retried, with a reset delta so partial output is discarded', async () => {
    // Paced chunks, so the client has really received content before the drop.
    await start({ profile: 'unit', timeScale: 0.3 }); // 3 ms per step
    sim.injectFault({ dropAfterChunks: 4 });
    const deltas: ChatDelta[] = [];
    const r = await client().chat({ messages: convo }, { onDelta: (d) => deltas.push(d) });
    assert.equal(r.attempts, 2);
    const reset = deltas.findIndex((d) => d.type === 'reset');
    assert.ok(reset > 0, 'a reset delta separates the attempts');
    const after = deltas
      .slice(reset + 1)
      .filter((d) => d.type === 'content')
      .map((d) => (d as { text: string }).text)
      .join('');
    assert.equal(after, r.message.content);
    assert.equal(sim.stats.requests[0].status, 'error');
    assert.equal(sim.stats.requests[1].status, 'done');
  });

  it('connection dropped mid-stream with retries off → retryable ConnectionError', async () => {
    await start();
    sim.injectFault({ dropAfterChunks: 2 });
    const e = await rejectsWith(client({ retry: { maxRetries: 0 } }).chat({ messages: convo }), ConnectionError);
    assert.equal(e.retryable, true);
  });

  it('connection reset before any response → retried', async () => {
    await start();
    sim.injectFault({ resetBeforeResponse: true });
    const r = await client().chat({ messages: convo, stream: false });
    assert.equal(r.attempts, 2);
    assert.equal(sleeps.length, 1);
  });

  it('a malformed chunk → ProtocolError (not swallowed); retried when allowed', async () => {
    await start();
    sim.injectFault({ malformedChunkAt: 2 });
    const e = await rejectsWith(client({ retry: { maxRetries: 0 } }).chat({ messages: convo }), ProtocolError);
    assert.match(e.message, /Malformed stream chunk/);
    sim.injectFault({ malformedChunkAt: 1 });
    const r = await client().chat({ messages: convo });
    assert.equal(r.attempts, 2);
  });

  it("vLLM's in-stream error event → typed error (not a silent truncation), retried", async () => {
    await start();
    sim.injectFault({ errorAfterChunks: 2, status: 500, message: 'EngineCore encountered an issue.' });
    const deltas: ChatDelta[] = [];
    const r = await client().chat({ messages: convo }, { onDelta: (d) => deltas.push(d) });
    assert.equal(r.attempts, 2);
    sim.injectFault({ errorAfterChunks: 1, status: 500, message: 'EngineCore encountered an issue.' });
    const e = await rejectsWith(client({ retry: { maxRetries: 0 } }).chat({ messages: convo }), ServerError);
    assert.match(e.message, /EngineCore encountered an issue/);
  });

  it('the fault header works too (per request)', async () => {
    await start();
    const e = await rejectsWith(
      client({ retry: { maxRetries: 0 } }).chat({ messages: convo, headers: { 'x-sim-fault': 'status=502; message=bad gateway' } }),
      ServerError,
    );
    assert.equal(e.status, 502);
    assert.match(e.message, /bad gateway/);
  });

  it('retries apply to listModels and tokenize too', async () => {
    await start();
    sim.injectFault({ route: 'models', status: 503 });
    sim.injectFault({ route: 'tokenize', status: 503 });
    const c = client();
    assert.equal((await c.listModels())[0].id, sim.model);
    assert.equal((await c.tokenize(convo)).source, 'server');
    assert.equal(sleeps.length, 2);
  });
});

/** One answer of the stub server below: status (default 200), headers and body. */
type StubAnswer = { status?: number; headers?: Record<string, string>; body: string };

/**
 * Servers that are not what the client expects behind its base URL: a web page, a server that ignores stream:true,
 * one that answers [DONE] alone. `answers` are used in order, one per request; the last one repeats.
 */
describe('VllmClient against a server that answers with something else', () => {
  let server: http.Server | undefined;
  let sleeps: number[];
  let requests: string[];
  const serve = async (...answers: StubAnswer[]): Promise<string> => {
    requests = [];
    server = http.createServer((req, res) => {
      req.resume();
      requests.push(`${req.method} ${req.url}`);
      const a = answers[Math.min(requests.length - 1, answers.length - 1)]!;
      res.writeHead(a.status ?? 200, a.headers ?? {});
      res.end(a.body);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const client = (baseURL: string, o: Partial<VllmClientOptions> = {}) =>
    new VllmClient({ baseURL, model: 'm', sleep: async (ms) => void sleeps.push(ms), random: () => 0.5, ...o });
  const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
  const chunk = (content: string, finish: string | null = null) => ({
    id: 'c1',
    object: 'chat.completion.chunk',
    model: 'm',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  });
  const completion = {
    id: 'c1',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'whole reply' }, finish_reason: 'stop' }],
  };
  beforeEach(() => {
    sleeps = [];
  });
  /** Stops the stub (its kept-alive sockets too), for the next `serve`. */
  const stop = async () => {
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  };
  afterEach(stop);

  it('a web page in answer to a streamed chat: a ProtocolError at once, quoting the page (controls escaped) and asking for the /v1 base URL', async () => {
    const page = '<!doctype html>\n<html><title>\u001b[31mDashboard\u009b2J</title>' + '<p>welcome</p>'.repeat(40) + '</html>';
    const origin = await serve({ headers: { 'content-type': 'text/html; charset=utf-8' }, body: page });
    const e = await rejectsWith(client(`${origin}/api`).chat({ messages: convo }), ProtocolError);
    assert.equal(e.retryable, false);
    assert.equal(e.attempts, 1);
    assert.deepEqual(sleeps, []);
    assert.deepEqual(requests, ['POST /api/chat/completions']);
    assert.ok(
      e.message.startsWith(`POST ${origin}/api/chat/completions answered with text/html, not an event stream: "<!doctype html>\\n<html>`),
      e.message,
    );
    assert.ok(e.message.includes(String.raw`<title>\u001b[31mDashboard\u009b2J</title>`), e.message);
    assert.ok(
      ![...e.message].some((c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)),
      'no raw control character',
    );
    assert.ok(e.message.length < 400, `quotes only the start of the page: ${e.message.length} characters`);
    assert.match(e.message, new RegExp(`Is ${origin}/api the OpenAI base URL\\? It usually ends in /v1\\.$`));
  });

  it('a web page in answer to a chat asked without streaming (the judge, the tool probe): refused at once, not retried as "not JSON"', async () => {
    const origin = await serve({ headers: { 'content-type': 'text/html' }, body: '<html><p>Sign in</p></html>' });
    const e = await rejectsWith(client(`${origin}/api`).chat({ messages: convo, stream: false }), ProtocolError);
    assert.equal(e.retryable, false);
    assert.deepEqual(sleeps, []);
    assert.match(e.message, /answered with text\/html, not JSON: "<html><p>Sign in<\/p><\/html>"\. Is .*\/api the OpenAI base URL\?/);
  });

  it('an empty 200 without a content type: not an event stream, not retried', async () => {
    const origin = await serve({ body: '' });
    const e = await rejectsWith(client(`${origin}/api`).chat({ messages: convo }), ProtocolError);
    assert.equal(e.retryable, false);
    assert.deepEqual(sleeps, []);
    assert.match(e.message, /answered with no content type and no event: an empty body\. Is .*\/api the OpenAI base URL\?/);
  });

  it('an event stream is read whatever its content type says (a gateway may send text/plain), or if it has none', async () => {
    const body = sse(
      { ...chunk('Hel'), choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
      chunk('lo'),
      chunk('', 'stop'),
      '[DONE]',
    );
    const types: Record<string, string>[] = [
      { 'content-type': 'text/event-stream' },
      { 'content-type': 'Text/Event-Stream; charset=utf-8' },
      { 'content-type': 'text/plain; charset=utf-8' },
      { 'content-type': 'application/octet-stream' },
      {},
    ];
    for (const headers of types) {
      const origin = await serve({ headers, body });
      const r = await client(`${origin}/v1`).chat({ messages: convo });
      assert.equal(r.message.content, 'Hello', JSON.stringify(headers));
      await stop();
    }
  });

  it('JSON in answer to a streamed chat: a whole completion is the reply, an error object its typed error, other JSON a ProtocolError', async () => {
    const json = { 'content-type': 'application/json' };
    // `"error": null` beside a reply (some gateways add it) is no error.
    const origin = await serve({ headers: json, body: JSON.stringify({ ...completion, error: null }) });
    const deltas: ChatDelta[] = [];
    const r = await client(`${origin}/v1`).chat({ messages: convo }, { onDelta: (d) => deltas.push(d) });
    assert.equal(r.message.content, 'whole reply');
    assert.equal(r.finishReason, 'stop');
    assert.deepEqual(deltas, [{ type: 'content', text: 'whole reply' }]);
    await stop();

    const overflow =
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the messages, 0 in the completion).";
    const errOrigin = await serve({
      headers: json,
      body: JSON.stringify({ object: 'error', message: overflow, type: 'BadRequestError', code: 400 }),
    });
    const o = await rejectsWith(client(`${errOrigin}/v1`).chat({ messages: convo }), ContextOverflowError);
    assert.equal(o.window, 4096);
    assert.deepEqual(sleeps, []);
    await stop();

    const otherOrigin = await serve({ headers: json, body: JSON.stringify({ status: 'ok', version: '2.1' }) });
    const p = await rejectsWith(client(`${otherOrigin}/api`).chat({ messages: convo }), ProtocolError);
    assert.equal(p.retryable, false);
    assert.match(
      p.message,
      /answered with JSON that is neither a chat completion nor an error: "\{\\"status\\":\\"ok\\",\\"version\\":\\"2\.1\\"\}"\. Is /,
    );
    assert.deepEqual(sleeps, []);
  });

  it('a stream of [DONE] alone is no reply: retried, and a ProtocolError if it never says more', async () => {
    const stream = { 'content-type': 'text/event-stream' };
    const reply = sse(chunk('Hi'), chunk('', 'stop'), '[DONE]');
    const origin = await serve({ headers: stream, body: sse('[DONE]') }, { headers: stream, body: reply });
    const r = await client(`${origin}/v1`).chat({ messages: convo });
    assert.equal(r.message.content, 'Hi');
    assert.equal(r.attempts, 2);
    await stop();

    sleeps = [];
    const emptyOrigin = await serve({ headers: stream, body: sse('[DONE]') });
    const e = await rejectsWith(client(`${emptyOrigin}/v1`).chat({ messages: convo }), ProtocolError);
    assert.equal(e.retryable, true);
    assert.equal(e.attempts, DEFAULT_RETRY_POLICY.maxRetries + 1);
    assert.equal(requests.length, DEFAULT_RETRY_POLICY.maxRetries + 1);
    assert.match(e.message, /ended the stream without a reply/);
  });

  it('/models answering 200 with no model list: an error naming the route, and the CLI assumes no window', async () => {
    const origin = await serve({ headers: { 'content-type': 'text/html' }, body: '<html><body>Grafana</body></html>' });
    const e = await rejectsWith(client(`${origin}/api`).contextWindow(), ProtocolError);
    assert.equal(e.retryable, false);
    assert.equal(
      e.message,
      `GET ${origin}/api/models answered with no model list: "<html><body>Grafana</body></html>". Is ${origin}/api the OpenAI base URL? It usually ends in /v1.`,
    );
    const said: string[] = [];
    const io = { out: (t: string) => said.push(t), err: (t: string) => said.push(t) };
    await assert.rejects(connect({ endpoint: `${origin}/api`, model: 'm' }, io), /answered with no model list/);
    assert.deepEqual(said, [], 'no "assuming a 32768-token window" note');
  });
});

describe('VllmClient at a wrong path of a real server (the simulator)', () => {
  let sim: SimHandle;
  afterEach(async () => {
    await sim?.close();
  });

  it('a 404 names the route asked for and suggests the base URL ending in /v1; a missing model does not', async () => {
    sim = await startSimulator({ timeScale: 0 });
    const api = `${sim.origin}/api`;
    const chat = await rejectsWith(new VllmClient({ baseURL: api, model: sim.model }).chat({ messages: convo }), NotFoundError);
    assert.equal(
      chat.message,
      `Not found (404) for POST ${api}/chat/completions: Is ${api} the OpenAI base URL? It usually ends in /v1. The server said: Not Found`,
    );
    // The whole chat URL given as the endpoint: the base URL inside it is named.
    const whole = `${sim.url}/chat/completions`;
    const listed = await rejectsWith(new VllmClient({ baseURL: whole }).listModels(), NotFoundError);
    assert.equal(
      listed.message,
      `Not found (404) for GET ${whole}/models: Is ${whole} the OpenAI base URL? It usually ends in /v1: perhaps ${sim.url}. The server said: Not Found`,
    );
    // The CLI: the first request (the window) fails with the hint.
    const io = { out: () => undefined, err: () => undefined };
    await assert.rejects(
      connect({ endpoint: api }, io),
      /for GET .*\/api\/models: Is .*\/api the OpenAI base URL\? It usually ends in \/v1/,
    );
    const model = await rejectsWith(new VllmClient({ baseURL: sim.url, model: 'nope' }).chat({ messages: convo }), NotFoundError);
    assert.equal(model.message, `Not found (404) for POST ${sim.url}/chat/completions: The model \`nope\` does not exist.`);
  });
});
