import assert from 'node:assert/strict';
import {
  describeToolsForPrompt,
  parseTextToolCalls,
  renderToolCallBlock,
  TextToolStreamFilter,
  toTextProtocolMessages,
} from '../../src/llm/textToolProtocol';
import type { ToolSpec } from '../../src/llm/types';

const tools: ToolSpec[] = [
  {
    type: 'function',
    function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];
let n = 0;
const ids = () => `id${++n}`;

describe('text tool protocol', () => {
  beforeEach(() => {
    n = 0;
  });

  it('parses fenced tool_call blocks and keeps the surrounding text', () => {
    const text =
      'First I read.\n\n```tool_call\n{"name": "read_file", "arguments": {"path": "a.ts"}}\n```\n\n```tool_call\n{"name":"read_file","arguments":"{\\"path\\":\\"b.ts\\"}"}\n```';
    const p = parseTextToolCalls(text, ids);
    assert.equal(p.content, 'First I read.');
    assert.deepEqual(
      p.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments]),
      [
        ['id1', 'read_file', '{"path":"a.ts"}'],
        ['id2', 'read_file', '{"path":"b.ts"}'],
      ],
    );
  });

  it('accepts an array body, hermes <tool_call> tags, and an unterminated final fence', () => {
    assert.equal(parseTextToolCalls('```tool_call\n[{"name":"a","arguments":{}},{"name":"b"}]\n```', ids).toolCalls.length, 2);
    const tagged = parseTextToolCalls('ok <tool_call>{"name":"a","arguments":{"x":1}}</tool_call>', ids);
    assert.equal(tagged.content, 'ok');
    assert.equal(tagged.toolCalls[0].function.arguments, '{"x":1}');
    const cut = parseTextToolCalls('```tool_call\n{"name":"a","arguments":{"x":2}}', ids);
    assert.equal(cut.toolCalls[0].function.arguments, '{"x":2}');
    assert.equal(cut.content, null);
  });

  it('leaves invalid blocks in the text instead of dropping them', () => {
    const text = 'Here:\n```tool_call\n{not json}\n```';
    const p = parseTextToolCalls(text, ids);
    assert.deepEqual(p.toolCalls, []);
    assert.equal(p.content, text);
    assert.deepEqual(parseTextToolCalls('```json\n{"name":"a"}\n```', ids).toolCalls, [], 'only tool_call fences count');
  });

  it('round-trips: a rendered call parses back to the same call', () => {
    const call = { id: 'x', type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"has ``` fence.md"}' } };
    const p = parseTextToolCalls(renderToolCallBlock(call), ids);
    assert.equal(p.toolCalls[0].function.name, 'read_file');
    assert.deepEqual(JSON.parse(p.toolCalls[0].function.arguments), { path: 'has ``` fence.md' });
  });

  it('rewrites a native conversation: tools into the system prompt, calls into blocks, results into user messages', () => {
    const out = toTextProtocolMessages(
      [
        { role: 'system', content: 'SYS' },
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'contents' },
      ],
      tools,
    );
    assert.equal(out[0].content, `SYS\n\n${describeToolsForPrompt(tools)}`);
    assert.equal(out[2].content, '```tool_call\n{"name":"read_file","arguments":{"path":"a"}}\n```');
    assert.deepEqual(out[3], { role: 'user', content: '```tool_result c1\ncontents\n```' });
    // no system message: one is added in front
    assert.equal(toTextProtocolMessages([{ role: 'user', content: 'hi' }], tools)[0].role, 'system');
  });

  it('the stream filter shows text up to a tool-call marker, even when the marker is split across chunks', () => {
    const f = new TextToolStreamFilter();
    const parts = ['Reading ', 'now. ``', '`tool', '_call\n{"name":"a"}\n```'];
    const shown = parts.map((p) => f.push(p)).join('') + f.flush();
    assert.equal(shown, 'Reading now. ');
    const g = new TextToolStreamFilter();
    assert.equal(g.push('code: ``') + g.push('`ts\nx\n```') + g.flush(), 'code: ```ts\nx\n```', 'other fences pass through');
  });
});
