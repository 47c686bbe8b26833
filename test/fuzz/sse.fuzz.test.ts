import assert from 'node:assert/strict';
import fc from 'fast-check';
import { plainContent, plainContentBytes } from '../../src/llm/plainContent';
import { SseByteParser } from '../../src/llm/sseBytes';
import { SseParser } from './sseText';
import { StreamAssembler, type RawChunk } from '../../src/llm/streamAssembler';

/**
 * The SSE parser and stream assembler see bytes cut wherever the network
 * cuts them. Property: however a valid stream is split into reads (inside a
 * multi-byte character, between \r and \n), with keep-alive comments
 * anywhere, the assembled reply equals the one built from the chunks
 * directly; and no input, however broken, makes the parser throw.
 */
const RUNS = 300;

const piece = fc.string({ unit: 'grapheme', maxLength: 12 });
const chunkArb: fc.Arbitrary<RawChunk> = fc.oneof(
  piece.map((content) => ({ choices: [{ index: 0, delta: { content } }] })),
  piece.map((reasoning) => ({ choices: [{ index: 0, delta: { reasoning } }] })),
  fc
    .record({ i: fc.integer({ min: 0, max: 2 }), name: fc.constantFrom('read_file', 'run_command'), args: piece })
    .map(({ i, name, args }) => ({
      choices: [
        { index: 0, delta: { tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name, arguments: args } }] } },
      ],
    })),
  fc.record({ i: fc.integer({ min: 0, max: 2 }), args: piece }).map(({ i, args }) => ({
    choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args } }] } }],
  })),
);

function assemble(chunks: RawChunk[]) {
  let n = 0;
  const asm = new StreamAssembler((k) => `gen_${k}_${n++}`);
  for (const c of chunks) asm.push(c);
  return { text: asm.text, reasoning: asm.reasoningText, calls: asm.toolCalls() };
}

/** Serialises chunks as SSE with the given line ending and comments before the chosen events. */
function toSse(chunks: RawChunk[], eol: string, comments: boolean[]): string {
  return (
    chunks
      .map((c, i) => `${comments[i % comments.length] ? `: keep-alive${eol}${eol}` : ''}data: ${JSON.stringify(c)}${eol}${eol}`)
      .join('') + `data: [DONE]${eol}${eol}`
  );
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

/** The client's parser: events in bytes, decoded here to compare. */
function parseReads(reads: Uint8Array[]): string[] {
  const parser = new SseByteParser();
  const out: string[] = [];
  const sink = { bytes: (b: Buffer, from: number, to: number) => out.push(b.toString('utf8', from, to)), text: (d: string) => out.push(d) };
  for (const r of reads) parser.push(r, sink);
  parser.end(sink);
  return out;
}

/** The reference: decode the stream, then parse the text. */
function parseReadsAsText(reads: Uint8Array[]): string[] {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const out: string[] = [];
  for (const r of reads) out.push(...parser.push(decoder.decode(r, { stream: true })));
  out.push(...parser.push(decoder.decode()), ...parser.end());
  return out;
}

describe('fuzz: SSE parser and stream assembler', () => {
  it(`any split of a valid stream, with comments and CRLF, assembles the same reply (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.array(chunkArb, { minLength: 1, maxLength: 25 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (chunks, eol, comments, cuts) => {
          const bytes = new TextEncoder().encode(toSse(chunks, eol, comments));
          const payloads = parseReads(splitAt(bytes, cuts));
          assert.equal(payloads.at(-1), '[DONE]');
          const viaWire = assemble(payloads.slice(0, -1).map((p) => JSON.parse(p) as RawChunk));
          assert.deepEqual(viaWire, assemble(chunks));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`the byte parser finds the events the text parser finds in the decoded stream, however it is cut (${RUNS * 4} runs)`, () => {
    // SSE's own characters, text beyond ASCII, a byte-order mark, and bytes that are not UTF-8.
    const unit = fc.oneof(
      fc.constantFrom('data:', 'data: ', ':', ' ', '\n', '\r', '\r\n', '\n\n', 'x', '{"a":1}', 'é', '日本', '🙂', 'event: e'),
      fc.string({ maxLength: 3 }),
    );
    const stream = fc
      .tuple(fc.array(unit, { maxLength: 40 }), fc.constantFrom('', '\uFEFF'), fc.uint8Array({ maxLength: 3 }))
      .map(([parts, bom, junk]) => {
        const text = new TextEncoder().encode(bom + parts.join(''));
        const at = text.length >> 1;
        return Buffer.concat([text.subarray(0, at), Buffer.from(junk.map((b) => b | 0x80)), text.subarray(at)]);
      });
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        const reads = splitAt(bytes, cuts);
        assert.deepEqual(parseReads(reads), parseReadsAsText(reads));
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it(`never throws on arbitrary bytes, and reports only data payloads (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.array(fc.nat(), { maxLength: 10 }), (bytes, cuts) => {
        const payloads = parseReads(splitAt(bytes, cuts));
        for (const p of payloads) assert.equal(typeof p, 'string');
      }),
      { numRuns: RUNS },
    );
  });

  it(`the assembler never throws on arbitrary JSON chunks (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 10 }), (values) => {
        const asm = new StreamAssembler((k) => `gen_${k}`);
        for (const v of values) if (v !== null && typeof v === 'object' && !Array.isArray(v)) asm.push(v as RawChunk);
        assert.equal(typeof asm.text, 'string');
        asm.toolCalls();
      }),
      { numRuns: RUNS },
    );
  });

  it(`the one-token fast path decodes exactly what a full parse does, and declines every other chunk (${RUNS} runs)`, () => {
    // Text that tries to look like the frame around it: quotes, escapes, the closing sequence itself.
    const tricky = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      fc.constantFrom(
        '"},"logprobs":null,"finish_reason":null}]}',
        '"},"logprobs":null,"finish_reason":null,"token_ids":null}]}',
        '","reasoning_content":null},"logprobs":null,"finish_reason":null,"token_ids":null}]}',
        '\\"',
        '"',
        '\\',
        '\u0000',
        '"usage":{}',
        '\n\r\t',
      ),
    );
    // The chunk shapes of vLLM versions: current (token_ids set), the reasoning_content rename's, and older.
    type Shape = 'current' | 'rename' | 'older';
    const shape = fc.constantFrom<Shape>('current', 'rename', 'older');
    fc.assert(
      fc.property(fc.array(tricky, { minLength: 1, maxLength: 3 }), shape, (parts, sh) => {
        const vllm = (delta: object, extra: object = {}, finish: string | null = null) =>
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            ...extra,
            choices: [
              {
                index: 0,
                delta: sh === 'rename' && !('reasoning_content' in delta) ? { ...delta, reasoning_content: null } : delta,
                logprobs: null,
                finish_reason: finish,
                ...(sh === 'older' ? {} : { token_ids: null }),
              },
            ],
          });
        const content = parts.join('');
        const plain = vllm({ content });
        assert.equal(plainContent(plain), (JSON.parse(plain) as { choices: [{ delta: { content: string } }] }).choices[0].delta.content);
        // In bytes, amid other events: the same text, or a decline (the caller then decodes and asks plainContent).
        const line = Buffer.from(`data: ${vllm({ content: 'x' })}\n\ndata: ${plain}\n\n`);
        const from = line.lastIndexOf('data: ') + 6;
        const fromBytes = plainContentBytes(line, from, line.length - 2);
        if (fromBytes !== undefined) assert.equal(fromBytes, content);
        else
          assert.ok(
            [...content].some((ch) => ch === '"' || ch === '\\' || ch < ' '),
            `declined a plain literal in a ${sh} chunk: ${JSON.stringify(content)}`,
          );
        // Everything the full parse would read more from goes the long way.
        for (const other of [
          vllm({ content }, {}, 'stop'),
          vllm({ content, reasoning_content: 'r' }),
          vllm({ content, reasoning: 'r' }),
          vllm({ content, tool_calls: [] }),
          vllm({ content }, { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
          vllm({ content }, { error: { code: 500 } }),
          JSON.stringify({
            choices: [0, 1].map((index) => ({ index, delta: { content }, logprobs: null, finish_reason: null })),
          }),
          plain.slice(0, -1),
          // Not JSON: a raw control character inside the literal (the full parse refuses it).
          plain.replace('"content":"', '"content":"\u0001'),
        ]) {
          assert.equal(plainContent(other), undefined, other);
          const b = Buffer.from(`${plain}\n${other}`);
          assert.equal(plainContentBytes(b, plain.length + 1, b.length), undefined, other);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
