/**
 * The vLLM client (real `openai` package, real HTTP on 127.0.0.1) against
 * the simulator: chat, streaming, tool calls, reasoning, models, tokenize.
 */
import assert from 'node:assert/strict';
import { VllmClient, type VllmClientOptions } from '../../src/llm/client';
import { NotFoundError } from '../../src/llm/errors';
import type { ChatDelta, ToolSpec } from '../../src/llm/types';
import type { ChatMessage } from '../../src/core/messages';
import { startSimulator, type SimHandle, type SimOptions } from '../sim/server';
import type { ScriptReply } from '../sim/script';

const TOOLS: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: { name: 'run', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  },
];

const TWO_CALLS: ScriptReply = {
  content: 'Let me look.',
  tool_calls: [
    { id: 'call_a1', name: 'read_file', arguments: { path: 'src/llm/client.ts', note: 'a fairly long argument so it streams in pieces' } },
    { id: 'call_b2', name: 'run', arguments: { cmd: 'npm test -- --grep "stream assembler"' } },
  ],
};

function collect() {
  const deltas: ChatDelta[] = [];
  return {
    deltas,
    onDelta: (d: ChatDelta) => deltas.push(d),
    text: () =>
      deltas
        .filter((d) => d.type === 'content')
        .map((d) => (d as { text: string }).text)
        .join(''),
  };
}

describe('VllmClient against the simulator', () => {
  let sim: SimHandle;
  const start = async (o: SimOptions = {}) => {
    sim = await startSimulator({ timeScale: 0, ...o });
    return sim;
  };
  const client = (o: Partial<VllmClientOptions> = {}) => new VllmClient({ baseURL: sim.url, ...o });
  afterEach(async () => {
    await sim?.close();
  });

  const convo: ChatMessage[] = [
    { role: 'system', content: 'You are a coding agent. Work in /repo and keep answers short; the project uses TypeScript 5.9.' },
    { role: 'user', content: 'Open src/index.ts and explain main().' },
  ];

  it('streams a reply, reports usage with cached tokens, and matches the non-streaming result', async () => {
    await start();
    const c = client();
    const s1 = collect();
    const r1 = await c.chat({ messages: convo }, { onDelta: s1.onDelta });
    assert.equal(r1.message.role, 'assistant');
    assert.equal(r1.message.content, 'Acknowledged: Open src/index.ts and explain main().');
    assert.equal(s1.text(), r1.message.content);
    assert.ok(s1.deltas.filter((d) => d.type === 'content').length > 1, 'content arrived in several chunks');
    assert.equal(r1.finishReason, 'stop');
    assert.equal(r1.attempts, 1);
    assert.equal(r1.model, sim.model);
    assert.deepEqual(r1.usage, {
      promptTokens: sim.stats.requests[0].promptTokens,
      completionTokens: sim.stats.requests[0].completionTokens,
      cachedTokens: 0,
    });

    const r2 = await c.chat({ messages: convo, stream: false });
    assert.equal(r2.message.content, r1.message.content);
    assert.equal(r2.usage?.cachedTokens, sim.stats.requests[1].cachedTokens);
    assert.ok((r2.usage?.cachedTokens ?? 0) > 0, 'the repeated prompt hits the prefix cache');
    assert.equal(sim.lastChatBody()?.stream, false);
  });

  it('sends stream_options.include_usage and a placeholder key when none is configured', async () => {
    await start();
    const seen: Array<{ url: string; auth: string | null; type: string | null; bytes: boolean }> = [];
    const c = client({
      // Node's own fetch: it adds no content-type to a byte body, so the client must.
      fetch: async (input, init) => {
        const h = new Headers(init?.headers);
        seen.push({
          url: String(input),
          auth: h.get('authorization'),
          type: h.get('content-type'),
          bytes: init?.body instanceof Uint8Array,
        });
        return fetch(input, init);
      },
    });
    await c.chat({ messages: convo });
    assert.deepEqual(
      seen.filter((s) => s.url.endsWith('/chat/completions')).map((s) => [s.type, s.bytes]),
      [['application/json', true]],
      'the chat body goes as JSON bytes with its type',
    );
    // A caller's own content-type, in any case, replaces the client's: one value goes out.
    await c.chat({ messages: convo, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    assert.equal(seen.at(-1)?.type, 'application/json; charset=utf-8');
    assert.deepEqual(sim.lastChatBody()?.stream_options, { include_usage: true });
    assert.equal(seen.at(-1)?.auth, 'Bearer splitpoint-no-key');
    assert.equal(sim.lastChatBody()?.model, sim.model, 'the model came from /v1/models');
    assert.ok(seen.some((s) => s.url.endsWith('/v1/models')));
  });

  for (const field of ['reasoning', 'reasoning_content'] as const) {
    it(`reads reasoning from "${field}" (stream and non-stream)`, async () => {
      await start({ reasoningField: field, script: [{ content: 'Answer: 42', reasoning: 'Think about src/a.ts first.', repeat: true }] });
      const c = client();
      const s = collect();
      const r = await c.chat({ messages: convo }, { onDelta: s.onDelta });
      assert.equal(r.reasoning, 'Think about src/a.ts first.');
      assert.equal(r.message.reasoning, r.reasoning);
      assert.equal(
        s.deltas
          .filter((d) => d.type === 'reasoning')
          .map((d) => (d as { text: string }).text)
          .join(''),
        r.reasoning,
      );
      assert.equal(r.message.content, 'Answer: 42');
      const n = await c.chat({ messages: convo, stream: false });
      assert.equal(n.reasoning, 'Think about src/a.ts first.');
    });
  }

  const toolModes: Array<[string, string | undefined]> = [
    ['with index', undefined],
    ['without index', 'no-tool-index'],
    ['with every call at index 0', 'tool-index-zero'],
  ];
  for (const [label, fault] of toolModes) {
    it(`assembles streamed tool calls ${label}`, async () => {
      await start({ script: [{ ...TWO_CALLS, repeat: true }] });
      const c = client();
      const s = collect();
      const r = await c.chat({ messages: convo, tools: TOOLS, headers: fault ? { 'x-sim-fault': fault } : {} }, { onDelta: s.onDelta });
      assert.equal(r.finishReason, 'tool_calls');
      assert.equal(r.message.content, 'Let me look.');
      const calls = r.message.tool_calls ?? [];
      assert.deepEqual(
        calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
        TWO_CALLS.tool_calls!.map((t) => ({ id: t.id, name: t.name, args: t.arguments })),
      );
      // the deltas rebuild the same calls
      const byIndex = new Map<number, string>();
      for (const d of s.deltas) if (d.type === 'tool_call') byIndex.set(d.index, (byIndex.get(d.index) ?? '') + d.argumentsDelta);
      assert.deepEqual(
        [...byIndex.values()],
        calls.map((c) => c.function.arguments),
      );
      if (fault === 'no-tool-index') {
        // prove the server really omitted the index
        const raw = await fetch(`${sim.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-sim-fault': fault },
          body: JSON.stringify({ messages: convo, tools: TOOLS, stream: true }),
        }).then((x) => x.text());
        assert.ok(raw.includes('"tool_calls":[{"id"'));
        assert.ok(!raw.includes('"index":0,"id"'));
      }
    });
  }

  it('returns tool calls from a non-streaming reply', async () => {
    await start({ script: [TWO_CALLS] });
    const r = await client().chat({ messages: convo, tools: TOOLS, stream: false });
    assert.deepEqual(
      r.message.tool_calls?.map((c) => c.id),
      ['call_a1', 'call_b2'],
    );
    assert.equal(r.finishReason, 'tool_calls');
  });

  it("a server that left out cached tokens when none were cached (vLLM's 2025 releases) reads 0 once it has reported them", async () => {
    await start({ promptTokensDetails: 'nonzero' });
    const c = client();
    const ask = (content: string) => c.chat({ messages: [...convo, { role: 'user', content }], stream: true });
    // The first cold prompt: nothing says the server reports them at all.
    assert.equal((await ask('First question about main().'))!.usage?.cachedTokens, undefined);
    const warm = (await ask('First question about main().')).usage?.cachedTokens;
    assert.ok(warm !== undefined && warm > 0, `${warm}`);
    // A cold prompt again: the field is left out, and it means none.
    const cold = await c.chat({ messages: [{ role: 'user', content: 'An unrelated prompt that shares no prefix.' }], stream: true });
    assert.equal(cold.usage?.cachedTokens, 0);
    // A server that never reported them stays unknown.
    const other = client();
    assert.equal(
      (await other.chat({ messages: [{ role: 'user', content: 'Another fresh prompt, never seen.' }] })).usage?.cachedTokens,
      undefined,
    );
  });

  it('sends {} for history arguments that are not a JSON object, which a 2025 vLLM answers with a 400', async () => {
    await start({ strictHistoryArguments: true });
    const call = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'run', arguments: args } });
    const calls = [call('call_ok', '{"cmd":"ls"}'), call('call_cut', '{"cmd":"npm te'), call('call_list', '[]')];
    const messages: ChatMessage[] = [
      ...convo,
      { role: 'assistant', content: null, tool_calls: calls },
      ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'done' })),
    ];
    await client().chat({ messages, tools: TOOLS, stream: false });
    const sent = (sim.lastChatBody()!.messages as Array<{ tool_calls?: Array<{ function: { arguments: string } }> }>)[2]!.tool_calls!;
    assert.deepEqual(
      sent.map((c) => c.function.arguments),
      ['{"cmd":"ls"}', '{}', '{}'],
    );
    // The caller's messages are left as they were.
    assert.equal(calls[1]!.function.arguments, '{"cmd":"npm te');
    // What the server does with them as they were.
    const raw = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: sim.model, messages }),
    });
    assert.equal(raw.status, 400);
  });

  it('falls back to the text tool protocol when the server has no tool parser, and says so once', async () => {
    const block = '```tool_call\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```';
    await start({ toolParser: false, script: [{ content: `I will read it.\n\n${block}`, repeat: true }] });
    const reports: string[] = [];
    const c = client({ onToolProtocolFallback: (i) => reports.push(i.reason) });
    const s = collect();
    const r = await c.chat({ messages: convo, tools: TOOLS }, { onDelta: s.onDelta });
    assert.equal(r.toolProtocol, 'text');
    assert.equal(c.toolProtocol, 'text');
    assert.equal(r.message.content, 'I will read it.');
    assert.equal(r.message.tool_calls?.length, 1);
    assert.equal(r.message.tool_calls![0].function.name, 'read_file');
    assert.deepEqual(JSON.parse(r.message.tool_calls![0].function.arguments), { path: 'README.md' });
    assert.equal(r.finishReason, 'tool_calls');
    assert.ok(!s.text().includes('```tool_call'), 'the raw block is not streamed as content');
    assert.equal(reports.length, 1);
    assert.match(reports[0], /enable-auto-tool-choice/);
    // the retried request carried no tools; the system prompt describes them instead
    const body = sim.lastChatBody()!;
    assert.equal(body.tools, undefined);
    const sys = (body.messages as Array<{ role: string; content: string }>)[0];
    assert.match(sys.content, /```tool_call/);
    assert.match(sys.content, /## read_file/);

    // a later turn with the tool result goes straight to the text protocol; no second report
    const turn2: ChatMessage[] = [
      ...convo,
      r.message,
      { role: 'tool', tool_call_id: r.message.tool_calls![0].id, content: '# Splitpoint' },
    ];
    const r2 = await c.chat({ messages: turn2, tools: TOOLS, stream: false });
    assert.equal(r2.toolProtocol, 'text');
    assert.equal(reports.length, 1);
    assert.equal(sim.stats.requests.filter((x) => x.httpStatus === 400).length, 1, 'only the first request was rejected');
    const sent = sim.lastChatBody()!.messages as Array<{ role: string; content: string }>;
    assert.match(sent[2].content, /```tool_call\n\{"name":"read_file"/);
    assert.equal(sent[3].role, 'user');
    assert.match(sent[3].content, /^```tool_result /);
  });

  it('probeTools() detects native support, or switches to text once', async () => {
    await start();
    assert.equal(await client().probeTools(), 'native');
    await sim.close();
    await start({ toolParser: false });
    const reports: string[] = [];
    const c = client({ onToolProtocolFallback: (i) => reports.push(i.reason) });
    assert.equal(await c.probeTools(), 'text');
    assert.equal(await c.probeTools(), 'text');
    assert.equal(reports.length, 1);
  });

  it('lists models with max_model_len and derives the context window', async () => {
    await start({ model: 'org/model-7b', maxModelLen: 65536 });
    const c = client();
    assert.deepEqual(await c.listModels(), [{ id: 'org/model-7b', maxModelLen: 65536, ownedBy: 'vllm' }]);
    assert.equal(await c.contextWindow(), 65536);
  });

  it('tokenize() uses POST /tokenize at the server root (not under /v1) and matches the prompt the server bills', async () => {
    await start();
    const urls: string[] = [];
    const c = client({ fetch: async (i, init) => (urls.push(String(i)), fetch(i, init)) });
    const t = await c.tokenize(convo, { tools: TOOLS });
    assert.equal(t.source, 'server');
    assert.equal(t.maxModelLen, sim.maxModelLen);
    assert.ok(urls.includes(`${sim.origin}/tokenize`));
    const r = await c.chat({ messages: convo, tools: TOOLS, toolChoice: 'none' });
    assert.equal(t.count, r.usage?.promptTokens);
  });

  it('tokenize() falls back to the local counter when the route is missing, and stops asking', async () => {
    await start({ tokenizeRoute: false });
    const urls: string[] = [];
    let localCalls = 0;
    const c = client({
      fetch: async (i, init) => (urls.push(String(i)), fetch(i, init)),
      localCount: (messages) => {
        localCalls++;
        return messages.reduce((s, m) => s + (m.content?.length ?? 0), 0);
      },
    });
    const a = await c.tokenize(convo);
    const b = await c.tokenize(convo);
    assert.deepEqual(a, { count: convo.reduce((s, m) => s + (m.content?.length ?? 0), 0), source: 'local' });
    assert.deepEqual(b, a);
    assert.equal(localCalls, 2);
    assert.equal(urls.filter((u) => u.endsWith('/tokenize')).length, 1, 'the missing route is remembered');
    assert.equal(c.tokenizeFallsBack, true);
    const noLocal = client();
    await assert.rejects(noLocal.tokenize(convo), NotFoundError);
  });

  it('plays a scripted agent: replies matched by the last user/tool message, in order', async () => {
    await start({
      script: {
        replies: [
          { match: 'tests pass', content: 'Done.' },
          { content: 'Reading.', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.ts' } }] },
          { content: 'Now running tests.', tool_calls: [{ id: 'c2', name: 'run', arguments: '{"cmd":"npm test"}' }] },
        ],
      },
    });
    const c = client();
    const r1 = await c.chat({ messages: convo, tools: TOOLS });
    assert.equal(r1.message.tool_calls?.[0].id, 'c1');
    const r2 = await c.chat({
      messages: [...convo, r1.message, { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' }],
      tools: TOOLS,
    });
    assert.equal(r2.message.tool_calls?.[0].function.arguments, '{"cmd":"npm test"}');
    const r3 = await c.chat({ messages: [...convo, { role: 'tool', tool_call_id: 'c2', content: '12 tests pass' }], tools: TOOLS });
    assert.equal(r3.message.content, 'Done.');
    assert.equal(r3.message.tool_calls, undefined);
    assert.deepEqual(
      sim.stats.requests.map((x) => x.kind),
      ['script', 'script', 'script'],
    );
  });

  it('honours tool_choice "required" and a named tool with a default call', async () => {
    await start();
    const c = client();
    const named = await c.chat({ messages: convo, tools: TOOLS, toolChoice: { type: 'function', function: { name: 'run' } } });
    assert.equal(named.message.tool_calls?.[0].function.name, 'run');
    const req = await c.chat({ messages: convo, tools: TOOLS, toolChoice: 'required', stream: false });
    assert.equal(req.message.tool_calls?.[0].function.name, 'read_file');
  });

  it('stops at max_tokens with finish_reason "length"', async () => {
    await start();
    const r = await client().chat({
      messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve' }],
      maxTokens: 3,
    });
    assert.equal(r.finishReason, 'length');
    assert.ok((r.usage?.completionTokens ?? 99) <= 3);
  });
});
