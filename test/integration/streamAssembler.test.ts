import assert from 'node:assert/strict';
import { StreamAssembler, type RawChunk, type RawToolCallDelta } from '../../src/llm/streamAssembler';

const tc = (...calls: RawToolCallDelta[]): RawChunk => ({ choices: [{ index: 0, delta: { tool_calls: calls } }] });
const finish = (reason: string): RawChunk => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });

function feed(chunks: RawChunk[]) {
  const a = new StreamAssembler((n) => `gen_${n}`);
  const deltas = chunks.flatMap((c) => a.push(c));
  return { a, deltas, calls: a.toolCalls().map((c) => [c.id, c.function.name, c.function.arguments]) };
}

describe('StreamAssembler', () => {
  it('assembles well-indexed parallel tool calls, interleaved', () => {
    const { calls, a } = feed([
      tc({ index: 0, id: 'A', type: 'function', function: { name: 'read', arguments: '' } }),
      tc({ index: 1, id: 'B', type: 'function', function: { name: 'run', arguments: '{"cmd"' } }),
      tc({ index: 0, function: { arguments: '{"path":' } }),
      tc({ index: 1, function: { arguments: ':"ls"}' } }),
      tc({ index: 0, function: { arguments: '"x.ts"}' } }),
      finish('tool_calls'),
    ]);
    assert.deepEqual(calls, [
      ['A', 'read', '{"path":"x.ts"}'],
      ['B', 'run', '{"cmd":"ls"}'],
    ]);
    assert.equal(a.finishReason, 'tool_calls');
  });

  it('without index: falls back to id, then to position (continue the latest call)', () => {
    const { calls } = feed([
      tc({ id: 'A', function: { name: 'read', arguments: '{"p":' } }),
      tc({ function: { arguments: '1}' } }),
      tc({ id: 'B', function: { name: 'run', arguments: '' } }),
      tc({ function: { arguments: '{"c":2}' } }),
    ]);
    assert.deepEqual(calls, [
      ['A', 'read', '{"p":1}'],
      ['B', 'run', '{"c":2}'],
    ]);
  });

  it('index misused (every call at 0): a new id starts a new call', () => {
    const { calls } = feed([
      tc({ index: 0, id: 'A', function: { name: 'read', arguments: '{}' } }),
      tc({ index: 0, id: 'B', function: { name: 'run', arguments: '' } }),
      tc({ index: 0, function: { arguments: '{"x":1}' } }),
    ]);
    assert.deepEqual(calls, [
      ['A', 'read', '{}'],
      ['B', 'run', '{"x":1}'],
    ]);
  });

  it('index reused with no ids: a different function name starts a new call; ids are generated', () => {
    const { calls } = feed([
      tc({ index: 0, function: { name: 'read', arguments: '{"a":1}' } }),
      tc({ index: 0, function: { name: 'run', arguments: '{"b":2}' } }),
    ]);
    assert.deepEqual(calls, [
      ['gen_0', 'read', '{"a":1}'],
      ['gen_1', 'run', '{"b":2}'],
    ]);
  });

  it('a repeated name on continuation chunks is not appended twice; an id sent after the name attaches to that call', () => {
    const { calls } = feed([
      tc({ index: 0, function: { name: 'read', arguments: '' } }),
      tc({ index: 0, id: 'late', function: { name: 'read', arguments: '{"p":' } }),
      tc({ index: 0, function: { name: 'read', arguments: '2}' } }),
    ]);
    assert.deepEqual(calls, [['late', 'read', '{"p":2}']]);
  });

  it('arguments sent as an object are serialised', () => {
    const { calls } = feed([tc({ index: 0, id: 'A', function: { name: 'read', arguments: { path: 'a.ts' } } })]);
    assert.deepEqual(calls, [['A', 'read', '{"path":"a.ts"}']]);
  });

  it('collects content, reasoning (either field), usage with cached tokens, and emits deltas in order', () => {
    const { a, deltas } = feed([
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { choices: [{ index: 0, delta: { reasoning_content: 'hmm ' } }] },
      { choices: [{ index: 0, delta: { reasoning: 'ok' } }] },
      { choices: [{ index: 0, delta: { content: 'Hi' } }] },
      { choices: [{ index: 0, delta: { content: ' there' } }] },
      finish('stop'),
      { choices: [], usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 64 } } },
    ]);
    assert.equal(a.text, 'Hi there');
    assert.equal(a.reasoningText, 'hmm ok');
    assert.deepEqual(a.usage, { promptTokens: 100, completionTokens: 5, cachedTokens: 64 });
    assert.deepEqual(
      deltas.map((d) => d.type),
      ['reasoning', 'reasoning', 'content', 'content'],
    );
  });

  it('usage without prompt_tokens_details leaves cachedTokens undefined', () => {
    const { a } = feed([{ choices: [], usage: { prompt_tokens: 10, completion_tokens: 1 } }]);
    assert.deepEqual(a.usage, { promptTokens: 10, completionTokens: 1, cachedTokens: undefined });
  });
});
