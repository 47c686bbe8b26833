import { strict as assert } from 'node:assert';
import { capToolOutput, MAX_TOOL_OUTPUT_CHARS } from '../../src/core/agent/toolOutput';

/** The kept text and the note's counts of a capped output. */
function parse(out: string): { body: string; lines: number; chars: number } {
  const at = out.lastIndexOf('\n[Output truncated: ');
  assert.ok(at >= 0, 'the output carries a truncation note');
  const m = /^\[Output truncated: (\d+) lines \/ (\d+) chars cut\./.exec(out.slice(at + 1));
  assert.ok(m, out.slice(at + 1, at + 200));
  return { body: out.slice(0, at), lines: Number(m[1]), chars: Number(m[2]) };
}

/**
 * Checks a cut by whole lines against its input: every line of the body is an input line, in order, or a marker
 * standing for exactly as many input lines as it says; the note's counts are what is gone.
 */
function checkLineCut(input: string, out: string): string[] {
  const { body, lines, chars } = parse(out);
  const inLines = input.split('\n');
  const kept: string[] = [];
  let i = 0;
  let marked = 0;
  for (const line of body.split('\n')) {
    const m = /^\[… (\d+) lines cut …\]$/.exec(line);
    if (m) {
      i += Number(m[1]);
      marked += Number(m[1]);
      continue;
    }
    assert.equal(line, inLines[i], `body line ${kept.length + 1} is input line ${i + 1}, whole`);
    kept.push(line);
    i++;
  }
  assert.equal(i, inLines.length, 'the markers and kept lines account for every input line');
  assert.equal(lines, inLines.length - kept.length, 'the note counts the lines removed');
  assert.equal(lines, marked, 'the note agrees with the markers');
  assert.equal(chars, input.length - kept.join('\n').length, 'the note counts the chars removed from the original');
  return kept;
}

/** Checks a cut by chunks: the body is input slices and `[… N chars cut …]` markers covering exactly the rest. */
function checkChunkCut(input: string, out: string): void {
  const { body, lines, chars } = parse(out);
  const parts = body.split(/\n\[… (\d+) chars cut …\]\n/);
  let pos = 0;
  let cutChars = 0;
  let cutBreaks = 0;
  for (let k = 0; k < parts.length; k++) {
    if (k % 2 === 0) {
      assert.equal(parts[k], input.slice(pos, pos + parts[k]!.length), `kept part ${k / 2} is the input at ${pos}`);
      pos += parts[k]!.length;
    } else {
      const n = Number(parts[k]);
      cutChars += n;
      cutBreaks += input.slice(pos, pos + n).split('\n').length - 1;
      pos += n;
    }
  }
  assert.equal(pos, input.length, 'the kept parts and markers cover the input');
  assert.equal(chars, cutChars, 'the note agrees with the markers');
  assert.equal(
    chars,
    input.length - (body.length - parts.filter((_, k) => k % 2 === 1).reduce((s, n) => s + `\n[… ${n} chars cut …]\n`.length, 0)),
  );
  assert.equal(lines, cutBreaks, 'the note counts the line breaks removed');
}

const ERROR_LINE = "src/db/pool.ts:88:13 - error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.";

function buildLog(lines: number, errorAt: number, width = 40): string {
  return Array.from({ length: lines }, (_, i) => (i === errorAt ? ERROR_LINE : `[build] compiling module ${i} ${'.'.repeat(width)}`)).join(
    '\n',
  );
}

describe('capToolOutput keeps the salient lines of the middle, and says truly what it cut', () => {
  it('a 2,000-line build log keeps the error line at line 1000', async () => {
    const log = buildLog(2_000, 999);
    const out = await capToolOutput(log, 'call_log', undefined);
    assert.ok(out.includes(ERROR_LINE), 'the error line in the middle reaches the model');
    const kept = checkLineCut(log, out);
    assert.equal(kept[0], log.split('\n')[0], 'the head stays');
    assert.equal(kept[kept.length - 1], log.split('\n')[1_999], 'the tail stays');
  });

  it('a 200,000-line read keeps its error line too, picked out by the error pattern alone (the whole model is for shorter outputs)', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) =>
      i === 123_456 ? 'src/db/pool.ts:88:13 - error TS2345: Argument of type string' : `line ${i} compiled module_${i % 1013} ok`,
    );
    const input = lines.join('\n');
    const out = await capToolOutput(input, 'c1', undefined);
    const kept = checkLineCut(input, out);
    assert.ok(kept.includes(lines[123_456]!), 'the error line survives');
  });

  it('a log under 800 lines but over the char cap is cut between lines, and the note counts the lines and chars removed', async () => {
    // 700 lines of ~110 chars: 77K chars. The cut used to fall mid-line and report "0 lines".
    const log = buildLog(700, 400, 80);
    assert.ok(log.length > MAX_TOOL_OUTPUT_CHARS);
    const out = await capToolOutput(log, 'call_700', undefined);
    const { lines, chars } = parse(out);
    assert.ok(lines > 0, `${lines} lines cut`);
    assert.ok(chars >= log.length - MAX_TOOL_OUTPUT_CHARS, `${chars} chars cut`);
    assert.ok(out.includes(ERROR_LINE));
    checkLineCut(log, out);
  });

  it('cut to a token budget, the error line stays and the counts stay true', async () => {
    const log = buildLog(500, 250);
    const budget = { maxTokens: 3_000, count: (t: string) => Math.ceil(t.length / 2) };
    assert.ok(budget.count(log) > budget.maxTokens && log.length < MAX_TOOL_OUTPUT_CHARS);
    const out = await capToolOutput(log, 'call_tokens', undefined, budget);
    assert.ok(budget.count(out) <= budget.maxTokens * 1.05, `${budget.count(out)} tokens`);
    assert.ok(out.includes(ERROR_LINE));
    checkLineCut(log, out);
  });

  it('an output with enormous lines is cut in chunks; an error chunk in the middle stays, and the counts match the markers', async () => {
    const minified = (n: number) => Array.from({ length: 2_000 }, (_, i) => `var a${n}_${i}=${i};`).join('');
    const lines = Array.from({ length: 40 }, (_, i) => (i === 20 ? `TypeError: boom at bundle.js:${i}` : minified(i)));
    const text = lines.join('\n');
    assert.ok(text.length > MAX_TOOL_OUTPUT_CHARS);
    const out = await capToolOutput(text, 'call_min', undefined);
    assert.ok(out.includes('TypeError: boom at bundle.js:20'));
    checkChunkCut(text, out);
    assert.ok(parse(out).lines > 0, 'line breaks fell in the cut parts');
  });

  it('one 2 MB line is cut in chunks, 0 lines removed', async () => {
    const text = 'QUJD'.repeat(500_000);
    const out = await capToolOutput(text, 'call_b64', undefined);
    assert.ok(out.length <= MAX_TOOL_OUTPUT_CHARS + 500);
    checkChunkCut(text, out);
    assert.equal(parse(out).lines, 0);
  });
});
