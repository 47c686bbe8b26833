import assert from 'node:assert/strict';
import { parseVerdict } from '../../src/core/agent/judge';

/** The scores and diagnosis of a reply, or its error message. */
function read(reply: string): { alignment: number; nonContradiction: number; diagnosis: string } | string {
  const v = parseVerdict(reply, 7);
  return v.kind === 'scored' ? { alignment: v.alignment, nonContradiction: v.nonContradiction, diagnosis: v.diagnosis } : v.message;
}

describe('judge verdicts with braces and quotes in the reply', () => {
  it('reads a diagnosis that quotes an unclosed brace', () => {
    const reply = '{"alignment": 8, "non_contradiction": 3, "diagnosis": "parseConfig() { was left unclosed in lexer.ts"}';
    assert.deepEqual(read(reply), { alignment: 8, nonContradiction: 3, diagnosis: 'parseConfig() { was left unclosed in lexer.ts' });
  });

  it('reads a diagnosis that quotes a stray closing brace', () => {
    const reply = '{"alignment": 6, "non_contradiction": 9, "diagnosis": "drops the } that ends emitBlock in codegen.ts"}';
    assert.deepEqual(read(reply), { alignment: 6, nonContradiction: 9, diagnosis: 'drops the } that ends emitBlock in codegen.ts' });
  });

  it('reads a diagnosis with escaped quotes and braces between them', () => {
    const reply = String.raw`{"alignment": 7, "non_contradiction": 5, "diagnosis": "misses the \"retry {budget\" key and the \\ in paths"}`;
    assert.deepEqual(read(reply), { alignment: 7, nonContradiction: 5, diagnosis: 'misses the "retry {budget" key and the \\ in paths' });
  });

  it('skips prose with a stray brace before the object', () => {
    const reply = 'The summary keeps the plan { mostly, but not the fix.\n{"alignment": 4, "non_contradiction": 8, "diagnosis": "no fix"}';
    assert.deepEqual(read(reply), { alignment: 4, nonContradiction: 8, diagnosis: 'no fix' });
  });

  it('skips prose whose braces hold an odd quote before the object', () => {
    const reply = 'I checked {the "plan} and the steps.\n{"alignment": 9, "non_contradiction": 9, "diagnosis": "ok"}';
    assert.deepEqual(read(reply), { alignment: 9, nonContradiction: 9, diagnosis: 'ok' });
  });

  it('skips prose with a stray brace before an object whose diagnosis holds one too', () => {
    const reply = 'Scoring { as asked:\n{"alignment": 3, "non_contradiction": 7, "diagnosis": "forgets the } closing parseConfig"}';
    assert.deepEqual(read(reply), { alignment: 3, nonContradiction: 7, diagnosis: 'forgets the } closing parseConfig' });
  });

  it('reads the object out of a json fence, braces in its diagnosis and all', () => {
    const reply = [
      'Here is my verdict:',
      '```json',
      '{"alignment": 5, "non_contradiction": 6, "diagnosis": "loses the `if (x) {` guard in lexer.ts"}',
      '```',
    ].join('\n');
    assert.deepEqual(read(reply), { alignment: 5, nonContradiction: 6, diagnosis: 'loses the `if (x) {` guard in lexer.ts' });
  });

  it('still reports a reply whose only object lacks a score, or is cut off, as an error', () => {
    assert.match(read('{"alignment": 9, "diagnosis": "a { b"}') as string, /had no verdict/);
    assert.match(read('{"alignment": 9, "non_contradiction": 8, "diagnosis": "cut off {') as string, /had no verdict/);
  });
});
