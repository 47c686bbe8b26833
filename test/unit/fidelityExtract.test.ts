import assert from 'node:assert/strict';
import { excerptAround } from '../../src/core/fidelity/excerpt';
import { extractFacts, hasKey, lossReport } from '../../src/core/fidelity';
import type { Fact } from '../../src/core/fidelity';
import { asst, result, sys, toolPair, user, call } from './helpers/build';
import { DEFAULT_PRETRIM } from '../../src/core/pretrim';

const keys = (facts: Fact[], kind: Fact['kind']) => facts.filter((f) => f.kind === kind).map((f) => f.key);

describe('fidelity: fact extraction', () => {
  it('finds identifiers of each case style, standing alone', () => {
    const f = extractFacts([user('Rename parseHeaderLine to HeaderParser, keep MAX_HEADER_BYTES and header_map_v2.')]);
    assert.deepEqual(keys(f, 'identifier').sort(), ['HeaderParser', 'MAX_HEADER_BYTES', 'header_map_v2', 'parseHeaderLine'].sort());
    assert.equal(
      hasKey(
        f.find((x) => x.key === 'parseHeaderLine')!,
        'parseHeaderLineX is different',
      ),
      false,
    );
  });

  it('finds paths with directories and bare file names, and paths in tool-call arguments', () => {
    const f = extractFacts([user('Look at src/core/hdr/parse.ts and package.json.'), call('read_file', { path: 'lib/util/strings.py' })]);
    assert.deepEqual(keys(f, 'path').sort(), ['lib/util/strings.py', 'package.json', 'src/core/hdr/parse.ts']);
  });

  it('finds numbers with units and versions; a lost space before the unit still counts as kept', () => {
    const f = extractFacts([asst('p99 latency is 250 ms, cache 512MiB, hit rate 85%, node v20.11.1, 3 retries.')]);
    assert.deepEqual(keys(f, 'number').sort(), ['250 ms', '3 retries', '512 MiB', '85%', 'v20.11.1'].sort());
    assert.ok(
      hasKey(
        f.find((x) => x.key === '250 ms')!,
        'latency 250ms',
      ),
    );
    assert.ok(
      !hasKey(
        f.find((x) => x.key === '250 ms')!,
        'latency 1250 ms',
      ),
    );
    // An address is not a version.
    assert.deepEqual(keys(extractFacts([asst('connect ECONNREFUSED 127.0.0.1:8123')]), 'number'), []);
  });

  it('finds error lines keyed by the specific exception name or code, not the generic one', () => {
    const log = [
      'running',
      'LedgerSkewError: ledger drift 4 entries',
      "TypeError: Cannot read properties of undefined (reading 'headerMap')",
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
    ].join('\n');
    const f = extractFacts([user('go'), ...toolPair('run', log)]);
    assert.deepEqual(keys(f, 'error').sort(), ['ECONNREFUSED', 'LedgerSkewError', 'headerMap'].sort());
    assert.ok(f.filter((x) => x.kind === 'error').every((x) => x.position === 'tool-output'));
  });

  it('finds test names with their status', () => {
    const log = [
      '  ✓ parses empty header (3ms)',
      '  ✗ rejects duplicate keys',
      'FAIL test/parse.test.ts',
      'tests/test_db.py::test_migrate_users PASSED',
    ].join('\n');
    const f = extractFacts([user('go'), ...toolPair('run', log)]).filter((x) => x.kind === 'test');
    const byName = Object.fromEntries(f.map((x) => [x.key, x.status]));
    assert.deepEqual(byName, {
      'parses empty header': 'passed',
      'rejects duplicate keys': 'failed',
      'test/parse.test.ts': 'failed',
      'tests/test_db.py::test_migrate_users': 'passed',
    });
  });

  it("finds decisions, constraints and the user's instructions with a key token", () => {
    const f = extractFacts([
      user('Please use pnpmWorkspace for the monorepo. Never drop the users_archive table.'),
      asst('DECISION: we will use zodSchema for validation. Fine.'),
    ]);
    assert.deepEqual(keys(f, 'instruction'), ['pnpmWorkspace']);
    assert.deepEqual(keys(f, 'constraint'), ['users_archive']);
    assert.deepEqual(keys(f, 'decision'), ['zodSchema']);
    assert.equal(f.find((x) => x.kind === 'decision')!.position, 'assistant');
  });

  it('marks consumed results and the middle of long outputs, attributes a fact to its first message, and adds pins', () => {
    const big = Array.from({ length: 400 }, (_, i) => (i === 200 ? 'QuotaBurstError at shard 7' : `ok line ${i}`)).join('\n');
    const msgs = [
      sys('s'),
      user('start'),
      ...toolPair('a', 'config sets retryBudgetMs'),
      asst('read it'),
      ...toolPair('b', big),
      asst('seen QuotaBurstError'),
    ];
    const f = extractFacts(msgs, [{ id: 'p1', text: 'keep the v1 API stable', kind: 'constraint', source: 'user', createdAt: 0 }], {
      pretrim: { keepRecentToolResults: 0, maxLines: 200, maxChars: 1e9, headLines: 60, tailLines: 60 },
    });
    assert.equal(f.find((x) => x.key === 'retryBudgetMs')!.position, 'consumed-result');
    const q = f.find((x) => x.kind === 'error' && x.key === 'QuotaBurstError')!;
    assert.equal(q.position, 'long-output-middle');
    assert.equal(q.messageId, msgs[6]!.id);
    const pin = f.find((x) => x.kind === 'pin')!;
    assert.equal(pin.mustSurvive, true);
    assert.equal(pin.key, 'keep the v1 API stable');
  });

  it('the same texts in a new message list give the same facts, with positions from the new list', () => {
    const out = 'config sets retryBudgetMs\nQuotaBurstError at shard 7';
    const first = [user('Use `pnpm` for installs.'), ...toolPair('a', out), asst('read it')];
    const a = extractFacts(first, [], { pretrim: { ...DEFAULT_PRETRIM, keepRecentToolResults: 0 } });
    // A fresh list of fresh objects holding the same texts (as the host builds for every loss report).
    const copy = first.map((m) => ({ ...m }));
    assert.deepEqual(extractFacts(copy, [], { pretrim: { ...DEFAULT_PRETRIM, keepRecentToolResults: 0 } }), a);
    assert.equal(a.find((x) => x.key === 'retryBudgetMs')!.position, 'consumed-result');
    // The same output text, now recent enough to be kept: its position comes from this list, not the last one.
    const b = extractFacts(copy, [], { pretrim: { ...DEFAULT_PRETRIM, keepRecentToolResults: 1 } });
    assert.equal(b.find((x) => x.key === 'retryBudgetMs')!.position, 'tool-output');
    // The user's instruction is one only in a user message: the same text from the assistant is not.
    assert.ok(a.some((x) => x.kind === 'instruction'));
    const said = extractFacts([asst('Use `pnpm` for installs.')]);
    assert.ok(!said.some((x) => x.kind === 'instruction'));
  });
});

describe('fidelity: loss report', () => {
  it("counts dropped facts by kind with each dropped fact's message, and names engine-caused drops", () => {
    const msgs = [user('Use fooBar and src/a.ts'), result('c1', 'BazQuuxError: broke')];
    const facts = extractFacts(msgs);
    const kept = new Set(facts.filter((x) => x.key === 'fooBar').map((x) => x.id));
    const reached = new Set(facts.filter((x) => x.kind !== 'error').map((x) => x.id));
    const r = lossReport(facts, kept, { reached });
    assert.equal(r.total, facts.length);
    assert.equal(r.dropped, facts.length - 1);
    assert.match(r.headline, new RegExp(`^dropped ${facts.length - 1} of ${facts.length} facts: `));
    assert.match(r.headline, /1 error line/);
    const err = r.facts.find((x) => x.kind === 'error')!;
    assert.equal(err.messageId, msgs[1]!.id);
    assert.equal(err.cause, 'engine');
    assert.equal(r.facts.find((x) => x.key === 'src/a.ts')!.cause, 'model');
  });

  it('reports missing pins', () => {
    const facts = extractFacts(
      [],
      [{ id: 'p9', text: 'never push to main', kind: 'constraint', source: 'user', createdAt: 0, messageId: 'm4' }],
    );
    const r = lossReport(facts, new Set());
    assert.deepEqual(r.missingPins, ['m4']);
    assert.equal(r.headline, 'dropped 1 of 1 facts: 1 pin');
  });
});

describe('a fact from a long line shows the part of the line that holds its key', () => {
  const paragraph =
    'The check passed: parser ok: 12 rules, and `^` is the only right-associative operator. ' +
    'We kept the Pratt parser because precedence climbing stays readable as operators are added later on. ' +
    'Lexing stays allocation-free per character, which the benchmark in bench/lex.bench.ts confirmed today. ' +
    'What is left: fix the number scanner in src/lexer.ts so 1.2.3 raises SyntaxError at 3 instead of NaN.';

  it('the sentence that holds the key, marked where it was cut, and never a text without the key', () => {
    assert.ok(paragraph.length > 300);
    const facts = extractFacts([{ role: 'assistant', content: paragraph, id: 'm1', kind: 'normal' }]);
    const number = facts.find((f) => f.kind === 'number' && f.key === '1.2.3');
    const path = facts.find((f) => f.kind === 'path' && f.key === 'src/lexer.ts');
    assert.ok(number && path, JSON.stringify(facts.map((f) => [f.kind, f.key])));
    for (const f of [number, path]) {
      assert.equal(f.text, '…What is left: fix the number scanner in src/lexer.ts so 1.2.3 raises SyntaxError at 3 instead of NaN.');
      assert.equal(f.cut, true, 'a cut text makes no probe');
    }
    // Every fact's text holds its key (before, each showed the paragraph's first 197 characters).
    for (const f of facts) assert.ok(f.text.toLowerCase().includes(f.key.toLowerCase()), `${f.kind} ${f.key}: ${f.text}`);
  });

  it("an error in a paragraph is the sentence that says it, keyed from that sentence, not the paragraph's", () => {
    const errors = extractFacts([{ role: 'assistant', content: paragraph, id: 'm1', kind: 'normal' }]).filter((f) => f.kind === 'error');
    // Before: one error fact keyed "bench/lex.bench.ts", showing the benchmark's sentence.
    assert.deepEqual(
      errors.map((f) => [f.key, f.text]),
      [['src/lexer.ts', 'What is left: fix the number scanner in src/lexer.ts so 1.2.3 raises SyntaxError at 3 instead of NaN.']],
    );
  });

  it('the words around the key when its sentence is too long, a short line whole', () => {
    const long = `${'alpha beta gamma '.repeat(20)}the key KEY_42 sits here ${'delta epsilon '.repeat(20)}`;
    const e = excerptAround(long, 'KEY_42', 80);
    assert.ok(e.length <= 80 && e.startsWith('…') && e.endsWith('…') && e.includes('KEY_42'), e);
    assert.match(e, /^…\w/, 'cut at a space, not inside a word');
    assert.equal(excerptAround('short line with KEY', 'KEY', 80), 'short line with KEY');
    // A number's key has a space its text may not ("250 ms" for "250ms"): found all the same.
    const latency = `${'An intro sentence that pushes the line along. '.repeat(4)}Then p95 rose to 250ms after the change. ${'More. '.repeat(30)}`;
    assert.equal(excerptAround(latency, '250 ms'), '…Then p95 rose to 250ms after the change.…');
    // Text with few spaces (CJK, base64) keeps its context: a cut moves only to a space near it.
    const cjk = `${'这是一个很长的中文段落没有空格'.repeat(10)} src/build/resolver.ts ${'继续写更多的中文文字没有空格'.repeat(10)}`;
    const c = excerptAround(cjk, 'src/build/resolver.ts', 80);
    assert.ok(c.length >= 70 && c.length <= 80 && c.includes('src/build/resolver.ts'), c);
    assert.equal(excerptAround('x'.repeat(300), 'x'.repeat(250), 90).length <= 90, true);
    assert.equal(excerptAround('x'.repeat(100), 'absent', 50), `${'x'.repeat(49)}…`);
  });
});
