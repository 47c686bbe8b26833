/**
 * The simulator over real HTTP (plain fetch), checked against vLLM's shapes
 * and against hand-computed prefix-cache hits.
 */
import assert from 'node:assert/strict';
import { startSimulator, type SimHandle, type SimOptions } from '../sim/server';
import { overflowMessage, TOOLS_UNSUPPORTED_MESSAGE } from '../sim/vllmErrors';

type Msg = { role: string; content: string };

async function post(sim: SimHandle, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${sim.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json: json as Record<string, any> };
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  assert.ok(line, `metric ${name} present`);
  return Number(line.split(' ').pop());
}

describe('simulator HTTP surface', () => {
  let sim: SimHandle;
  const start = async (o: SimOptions = {}) => {
    sim = await startSimulator({ timeScale: 0, ...o });
    return sim;
  };
  afterEach(async () => {
    await sim?.close();
  });

  it('GET /v1/models reports the model with max_model_len', async () => {
    await start({ model: 'qwen-sim', maxModelLen: 8192 });
    const res = await fetch(`${sim.url}/models`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { object: string; data: Array<Record<string, unknown>> };
    assert.equal(body.object, 'list');
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0].id, 'qwen-sim');
    assert.equal(body.data[0].max_model_len, 8192);
    assert.equal(body.data[0].owned_by, 'vllm');
  });

  it('GET /health answers 200 and unknown routes 404 like FastAPI', async () => {
    await start();
    assert.equal((await fetch(`${sim.origin}/health`)).status, 200);
    const nf = await fetch(`${sim.origin}/nope`);
    assert.equal(nf.status, 404);
    assert.deepEqual(await nf.json(), { detail: 'Not Found' });
  });

  it('POST /tokenize (chat form) counts the rendered prompt, and 404s when disabled', async () => {
    await start({ tokenizer: 'char' });
    const messages: Msg[] = [{ role: 'user', content: 'abc' }];
    const r = await post(sim, '/tokenize', { messages, add_generation_prompt: true });
    assert.equal(r.status, 200);
    // <|im_start|> "user\nabc" <|im_end|> "\n" <|im_start|> "assistant\n"  = 1+8+1+1+1+10
    assert.equal(r.json.count, 22);
    assert.equal(r.json.tokens.length, 22);
    assert.equal(r.json.max_model_len, sim.maxModelLen);
    const noGen = await post(sim, '/tokenize', { messages, add_generation_prompt: false });
    assert.equal(noGen.json.count, 11);
    const disabled = await post(sim, '/tokenize', { messages }, { 'x-sim-fault': 'tokenize-404' });
    assert.equal(disabled.status, 404);
  });

  it("returns vLLM's 400 body when the prompt exceeds the window (current and legacy shapes)", async () => {
    for (const shape of ['current', 'legacy'] as const) {
      await start({ tokenizer: 'char', maxModelLen: 200, errorShape: shape });
      const messages: Msg[] = [{ role: 'user', content: 'x'.repeat(300) }];
      const count = (await post(sim, '/tokenize', { messages })).json.count as number;
      const r = await post(sim, '/v1/chat/completions', { model: sim.model, messages, max_tokens: 16 });
      assert.equal(r.status, 400);
      const message = overflowMessage('current', 200, count, 16);
      const expected =
        shape === 'current'
          ? { error: { message, type: 'BadRequestError', param: null, code: 400 } }
          : { object: 'error', message, type: 'BadRequestError', param: null, code: 400 };
      assert.deepEqual(r.json, expected);
      await sim.close();
    }
  });

  it('rejects tool_choice "auto" without a tool parser, with vLLM\'s message; "none" still works', async () => {
    await start({ toolParser: false });
    const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } }];
    const messages: Msg[] = [{ role: 'user', content: 'hi' }];
    const r = await post(sim, '/v1/chat/completions', { messages, tools });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.message, TOOLS_UNSUPPORTED_MESSAGE);
    const none = await post(sim, '/v1/chat/completions', { messages, tools, tool_choice: 'none' });
    assert.equal(none.status, 200);
  });

  it('streams chunks in vLLM order: role, content, finish, usage with cached_tokens, [DONE]', async () => {
    await start();
    const res = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'hello stream' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, 'Acknowledged: hello stream');
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.prompt_tokens, sim.stats.requests[0].promptTokens);
    assert.equal(usage.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  });

  it('prefix cache: two chats sharing exactly 40 prompt tokens hit 2 blocks (hand-computed with the char tokenizer)', async () => {
    await start({ tokenizer: 'char' });
    // <|im_start|> + "system\n" = 8 tokens, then 32 shared characters, then the prompts differ.
    const shared = 'S'.repeat(32);
    const a = [
      { role: 'system', content: `${shared}A tail that differs` },
      { role: 'user', content: 'q' },
    ];
    const b = [
      { role: 'system', content: `${shared}B tail that differs` },
      { role: 'user', content: 'q' },
    ];
    const ra = await post(sim, '/v1/chat/completions', { messages: a });
    const rb = await post(sim, '/v1/chat/completions', { messages: b });
    assert.equal(ra.json.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(rb.json.usage.prompt_tokens_details.cached_tokens, 32);
    const m = await (await fetch(`${sim.origin}/metrics`)).text();
    assert.equal(metric(m, 'vllm:prefix_cache_queries_total'), ra.json.usage.prompt_tokens + rb.json.usage.prompt_tokens);
    assert.equal(metric(m, 'vllm:prefix_cache_hits_total'), 32);
  });

  it('prefix cache with tiktoken: hit = full blocks of the common token prefix reported by /tokenize', async () => {
    await start();
    const sys = { role: 'system', content: 'You are a careful coding agent working in /repo. Follow the rules in AGENTS.md exactly.' };
    const first = [sys, { role: 'user', content: 'Read src/index.ts and tell me what the exported function main() does.' }];
    const second = [...first, { role: 'assistant', content: 'It parses argv.' }, { role: 'user', content: 'Now add a --verbose flag.' }];
    const ta = (await post(sim, '/tokenize', { messages: first })).json.tokens as number[];
    const tb = (await post(sim, '/tokenize', { messages: second })).json.tokens as number[];
    let common = 0;
    while (common < ta.length && ta[common] === tb[common]) common++;
    await post(sim, '/v1/chat/completions', { messages: first });
    const r = await post(sim, '/v1/chat/completions', { messages: second });
    assert.ok(common >= 16);
    assert.equal(r.json.usage.prompt_tokens_details.cached_tokens, Math.floor(common / 16) * 16);
  });

  for (const pessimistic of [false, true]) {
    const expect = pessimistic
      ? 'pessimistic → no reuse before prefill completes'
      : "admission-time registration → the second reuses the first's blocks";
    it(`same-step requests: ${expect}`, async () => {
      await start({ tokenizer: 'char', pessimistic, profile: 'unit' });
      const messages = [{ role: 'user', content: 'p'.repeat(300) }];
      const n = sim.tokenize(messages).length;
      // Both wait in the queue, then the scheduler admits them in one step.
      sim.pauseScheduler();
      const both = Promise.all([post(sim, '/v1/chat/completions', { messages }), post(sim, '/v1/chat/completions', { messages })]);
      while (sim.stats.queued < 2) await new Promise((r) => setTimeout(r, 2));
      sim.resumeScheduler();
      const [r1, r2] = await both;
      const cached = [r1, r2].map((r) => r.json.usage.prompt_tokens_details.cached_tokens as number).sort((x, y) => x - y);
      const [first, second] = [...sim.stats.requests].sort((x, y) => x.cachedTokens - y.cachedTokens);
      assert.ok(second.admitted! < first.firstToken!, 'the second was admitted while the first was still prefilling');
      assert.equal(cached[0], 0);
      assert.equal(cached[1], pessimistic ? 0 : Math.floor((n - 1) / 16) * 16);
    });
  }

  it('/metrics exposes Prometheus counters that match the per-request log', async () => {
    await start();
    const messages = [
      { role: 'system', content: 'A fairly long system prompt so that a few blocks fill up: '.repeat(4) },
      { role: 'user', content: 'go' },
    ];
    await post(sim, '/v1/chat/completions', { messages });
    await post(sim, '/v1/chat/completions', { messages });
    const res = await fetch(`${sim.origin}/metrics`);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    const text = await res.text();
    assert.match(text, /# TYPE vllm:prefix_cache_queries_total counter/);
    assert.match(text, /# TYPE vllm:prefix_cache_hits_total counter/);
    const recs = sim.stats.requests;
    assert.equal(
      metric(text, 'vllm:prefix_cache_queries_total'),
      recs.reduce((s, r) => s + r.promptTokens, 0),
    );
    assert.equal(
      metric(text, 'vllm:prefix_cache_hits_total'),
      recs.reduce((s, r) => s + r.cachedTokens, 0),
    );
    assert.ok(recs[1].cachedTokens > 0);
    assert.equal(metric(text, 'vllm:num_requests_running'), 0);
  });

  it('LRU eviction over HTTP: a small KV pool forgets the least recently used prefix', async () => {
    await start({ tokenizer: 'char', cacheCapacityBlocks: 24 });
    const conv = (ch: string) => [{ role: 'user', content: ch.repeat(150) }]; // 1+8+150+1+1+1+10 = 172 tokens = 11 blocks
    const hit = async (ch: string) =>
      (await post(sim, '/v1/chat/completions', { messages: conv(ch) })).json.usage.prompt_tokens_details.cached_tokens;
    assert.equal(await hit('a'), 0);
    assert.equal(await hit('b'), 0);
    assert.equal(await hit('a'), 160, 'a is still cached; now b is least recently used');
    // Pool: 24 blocks. Cached now: a (10 full), b (10 full); 4 empty blocks.
    // c needs 11 blocks: the 4 empty ones, then 7 evicted from the LRU end. b is least recently
    // used and its blocks were freed tail-first, so b loses its last 7 full blocks and keeps 3.
    assert.equal(await hit('c'), 0);
    assert.equal(sim.cache.stats().evictions, 7);
    assert.equal(await hit('a'), 160, 'a survived');
    assert.equal(await hit('b'), 3 * 16, 'b kept only its first 3 blocks');
  });

  it('requires the API key when started with one', async () => {
    await start({ apiKey: 'sekret' });
    assert.equal((await fetch(`${sim.url}/models`)).status, 401);
    assert.equal((await fetch(`${sim.url}/models`, { headers: { authorization: 'Bearer sekret' } })).status, 200);
  });

  it('tokenizer: long runs without spaces are encoded slice by slice (bounded cost), other text exactly as js-tiktoken', async () => {
    const { Tiktoken } = await import('js-tiktoken/lite');
    const { default: ranks } = await import('js-tiktoken/ranks/cl100k_base');
    const reference = new Tiktoken(ranks);
    const { tiktokenTokenizer } = await import('../sim/tokenizer');
    const t = tiktokenTokenizer();
    const prose = 'Read src/index.ts, then run `npm test -- --grep retry` and report the failures (3 of 118).';
    assert.deepEqual(t.encode(prose), reference.encode(prose, [], []));
    // 20,000 characters of "-=" take js-tiktoken over a minute; here they are 64-character slices.
    const run = '-='.repeat(10_000);
    const ids = t.encode(`before ${run} after`);
    const slice = reference.encode(run.slice(0, 64), [], []);
    assert.deepEqual(ids.slice(0, 1), reference.encode('before', [], []));
    assert.deepEqual(ids.slice(2, 2 + slice.length), slice, 'the run starts with its first slice');
    assert.deepEqual(t.encode(`before ${run} after`), ids, 'deterministic, so prefix caching holds');
  });
});
