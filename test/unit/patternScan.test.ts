import assert from 'node:assert/strict';
import {
  IDENT_RES,
  NUMBER_RE,
  PATH_RE,
  allMatches,
  identifiersIn,
  numbersIn,
  pathsIn,
  testLine,
  verdictOf,
} from '../../src/core/fidelity/patterns';
import { extractFacts } from '../../src/core/fidelity';
import { generateSession } from '../fixtures/generateSession';
import { asst, toolPair, user } from './helpers/build';
import { LONG_SESSION_OPTIONS } from '../fixtures/generateSession';

/*
 * The scanners skip lines a pattern cannot match (no capital, no underscore, no digit, no slash or dot, no test
 * verdict) and loop `exec` on the shared regexes. These references are the plain forms they replaced: every pattern
 * on every line, with matchAll. Any line where a shortcut turns away a real match shows up as a difference.
 */
const ref = {
  paths: (t: string) =>
    [...t.matchAll(PATH_RE)]
      .map((m) => m.slice(1).find((x) => x !== undefined) ?? m[0])
      .filter((p) => !/^\d+(\.\d+)*$/.test(p) && !p.includes('://') && !/^\.+$/.test(p)),
  identifiers: (t: string) => IDENT_RES.flatMap((re) => [...t.matchAll(re)].map((m) => m[0])),
  numbers: (t: string) =>
    [...t.matchAll(NUMBER_RE)].flatMap((m) =>
      m[3] !== undefined ? [m[3]] : m[1] !== undefined && m[2] !== undefined ? [m[2] === '%' ? `${m[1]}%` : `${m[1]} ${m[2]}`] : [],
    ),
  // Every verdict pattern on every line: testLine's hint and length bound are what is under test.
  test: verdictOf,
};

/** Lines at the edges of each shortcut, besides what the generated sessions hold. */
const EDGES = [
  '  ✓ parses headers (3 ms)',
  '✔ keeps the tail',
  '√ works on windows',
  '  ✗ rejects bad input (12ms)',
  '✖ times out',
  '× drops the error line',
  'PASS src/core/plan.test.ts',
  'PASSED tests/unit',
  'FAIL test/x.test.ts',
  'FAILED tests/integration',
  'ok 1 - works',
  'not ok 2 - broken again',
  'tests/test_api.py::test_login PASSED',
  '  tests/test_api.py::test_logout FAILED [ 50%]',
  'nothing here at all',
  'only lower case words and 250 ms',
  'snake_case_only here',
  'SCREAMING_CASE_ONLY',
  'camelCase without underscores',
  'PascalCaseName',
  'see package.json',
  'src/a/b',
  '~/notes',
  'v2.4.1 and 1.2.3.4',
  '85% of 512MiB in 3 retries',
  'https://example.com/a/b.ts',
  '...',
  '',
];

function corpus(): string[] {
  const lines = new Set(EDGES);
  for (const seed of [1, 2, 3]) {
    const opts = seed === 1 ? LONG_SESSION_OPTIONS : { seed, userTurns: 6, targetMessages: 120, targetChars: 150_000 };
    for (const m of generateSession(opts)) {
      const texts = [
        typeof m.content === 'string' ? m.content : '',
        ...(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.function.arguments) : []),
      ];
      for (const t of texts) for (const l of t.split('\n')) lines.add(l);
    }
  }
  return [...lines];
}

describe('fidelity patterns: the scanners find what every pattern on every line finds', () => {
  const lines = corpus();

  it('paths, identifiers, numbers and test verdicts match the plain scans on every line of three sessions', () => {
    assert.ok(lines.length > 5000, `a corpus of ${lines.length} lines`);
    let found = 0;
    for (const l of lines) {
      assert.deepEqual(pathsIn(l), ref.paths(l), l);
      assert.deepEqual(identifiersIn(l), ref.identifiers(l), l);
      assert.deepEqual(numbersIn(l), ref.numbers(l), l);
      assert.deepEqual(testLine(l), ref.test(l), l);
      found += pathsIn(l).length + identifiersIn(l).length + numbersIn(l).length + (testLine(l) ? 1 : 0);
    }
    // The corpus has something to find of every kind, so agreement is not agreement on nothing.
    for (const [what, n] of [
      ['paths', lines.filter((l) => ref.paths(l).length > 0).length],
      ['identifiers', lines.filter((l) => ref.identifiers(l).length > 0).length],
      ['numbers', lines.filter((l) => ref.numbers(l).length > 0).length],
      ['test verdicts', lines.filter((l) => ref.test(l)).length],
    ] as const)
      assert.ok(n >= 10, `${n} lines with ${what}`);
    assert.ok(found > 1000);
  });

  it('whole multi-line texts too (the fact scan passes a message at a time to some of them)', () => {
    const text = lines.slice(0, 3000).join('\n');
    assert.deepEqual(identifiersIn(text), ref.identifiers(text));
    assert.deepEqual(pathsIn(text), ref.paths(text));
    assert.deepEqual(numbersIn(text), ref.numbers(text));
  });

  it('a shared regex left mid-scan by another caller still scans from the start, and is left at the start', () => {
    const line = 'see src/a.ts and lib/b.py';
    PATH_RE.lastIndex = 10;
    assert.deepEqual(pathsIn(line), ['src/a.ts', 'lib/b.py']);
    assert.equal(PATH_RE.lastIndex, 0);
    NUMBER_RE.lastIndex = 5;
    assert.deepEqual(numbersIn('took 250 ms, then 3 retries'), ['250 ms', '3 retries']);
    assert.equal(NUMBER_RE.lastIndex, 0);
    const re = /(a)|(b)/g;
    re.lastIndex = 3;
    assert.deepEqual(allMatches(re, 'ab ba'), ['a', 'b', 'b', 'a']);
    assert.equal(re.lastIndex, 0);
  });

  it('a long line is scanned in windows that end at spaces: no path or identifier is cut or lost', () => {
    // Corpus lines joined by spaces into one line of hundreds of KB: many window ends, each at a space.
    const line = lines.slice(0, 8000).join(' ');
    assert.ok(line.length > 200_000);
    assert.deepEqual(pathsIn(line), ref.paths(line));
    assert.deepEqual(identifiersIn(line), ref.identifiers(line));
  });

  it('a 10 MB line of paths, camelCase humps or dotted numbers scans without overflowing the regex stack', () => {
    // Each threw "Maximum call stack size exceeded" when one pattern run saw the whole line (a path's directories,
    // a camelCase word's humps and a dotted name's parts are repeated groups, one backtracking entry each).
    const huge = { 'a/': `${'a/'.repeat(5_000_000)}b.ts`, aB: 'aB'.repeat(5_000_000), '1.': '1.'.repeat(5_000_000) };
    // A path longer than a window is found as its last window's part.
    assert.match(pathsIn(huge['a/']).at(-1) ?? '', /^(a\/)+b\.ts$/);
    assert.ok(identifiersIn(huge.aB).length > 0);
    // Nothing to find in a dotted run of digits (no extension, no unit), but the path pattern still tries it.
    assert.deepEqual(pathsIn(huge['1.']), []);
    for (const [name, content] of Object.entries(huge)) {
      const facts = extractFacts([user('run it'), ...toolPair('run', content), asst('done')]);
      if (name !== '1.')
        assert.ok(
          facts.some((f) => f.messageIndex === 2),
          `${name}: facts of the output`,
        );
    }
  });

  it('a line over 1,000 characters is never a test verdict (the lazy name pattern took seconds on 10 MB)', () => {
    const padded = `✓ parses headers${' '.repeat(990)}(3 ms)`;
    assert.deepEqual(testLine(padded.replace(/ {990}/, ' ')), { name: 'parses headers', status: 'passed' });
    assert.equal(testLine(padded), undefined);
    assert.equal(testLine(`✓ ${'a '.repeat(5_000_000)}`), undefined);
  });

  it('a pattern that can match empty text does not loop', () => {
    assert.deepEqual(allMatches(/x*/g, 'axxb'), ['', 'xx', '', '']);
  });
});
