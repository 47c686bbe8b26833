import assert from 'node:assert/strict';
import { extractFacts, factsKeptIn } from '../../src/core/fidelity';
import type { Fact } from '../../src/core/fidelity';
import { toolPair, user } from './helpers/build';

const errorsOf = (output: string): Fact[] =>
  extractFacts([user('build it'), ...toolPair('run_command', output)]).filter((f) => f.kind === 'error');

/** Each line alone in a tool output, and the key its error fact gets: what a summary must say to keep it. */
const KEYS: ReadonlyArray<readonly [tool: string, line: string, key: string]> = [
  ['gcc', "src/net/socket.c:214:17: error: 'struct conn' has no member named 'retry_budget'", 'retry_budget'],
  ['gcc, no column', 'src/net/socket.c:214: error: expected expression', 'expected expression'],
  ['gcc, punctuators quoted', "src/net/socket.c:90:3: error: expected ';' before '}' token", "expected ';' before '}' token"],
  ['gcc, a name and a type', "src/hdr.c:9:5: error: conflicting types for 'parse_header'; have 'int(void)'", 'parse_header'],
  ['clang fatal', "src/main.c:3:10: fatal error: 'netdb_ext.h' file not found", 'netdb_ext.h'],
  ['gcc driver', 'collect2: error: ld returned 1 exit status', 'ld returned 1 exit status'],
  ['javac', 'Foo.java:12: error: cannot find symbol', 'cannot find symbol'],
  ['MSVC', "a.cpp(12): error C2065: 'retry_budget': undeclared identifier", 'retry_budget'],
  [
    'C#',
    "Program.cs(12,5): error CS0103: The name 'x' does not exist in the current context",
    "The name 'x' does not exist in the current context",
  ],
  ['make', 'make: *** [Makefile:42: build/net/socket.o] Error 1', 'build/net/socket.o'],
  [
    'make, recursive',
    'make[2]: *** [src/CMakeFiles/net.dir/build.make:76: src/CMakeFiles/net.dir/socket.c.o] Error 1',
    'src/CMakeFiles/net.dir/socket.c.o',
  ],
  ['make, no rule', "make: *** No rule to make target 'install'.  Stop.", 'install'],
  ['eslint', "  12:5  error  'x' is not defined  no-undef", "'x' is not defined"],
  [
    'eslint, rule with a plugin',
    '  3:1  error  Unexpected console statement  @typescript-eslint/no-console',
    'Unexpected console statement',
  ],
  ['shell', 'Segmentation fault (core dumped)', 'Segmentation fault'],
  ['shell, lower case', 'bash: line 1: 4242 segmentation fault  ./server', 'segmentation fault'],
  ['shell, abort', 'Aborted (core dumped)', 'Aborted'],
  ['ld', "ld: undefined reference to 'foo'", 'foo'],
  ['GNU ld', "/usr/bin/ld: main.o: in function `main': main.c:(.text+0x1a): undefined reference to `conn_retry'", 'conn_retry'],
  ['GNU ld, library', '/usr/bin/ld: cannot find -lssl', 'cannot find -lssl'],
  ['lld', 'ld.lld: error: undefined symbol: conn_retry', 'conn_retry'],
  ['macOS ld', 'Undefined symbols for architecture arm64:', 'Undefined symbols for architecture arm64'],
  ['Go', './main.go:12:2: undefined: Foo', 'undefined: Foo'],
  ['Go, a camelCase name', './main.go:7:9: cannot use retryBudget (variable of type int) as string value', 'retryBudget'],
  ['Go, unused', './main.go:5:2: declared and not used: x', 'declared and not used: x'],
  ['Rust', 'error[E0425]: cannot find value `retry_budget` in this scope', 'retry_budget'],
  ['npm', 'npm ERR! missing script: build', 'missing script: build'],
  ['npm 10', 'npm error Missing script: "build:prod"', 'Missing script: "build:prod"'],
  ['pytest', 'FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2', 'tests/test_x.py::test_y'],
  // Shapes keyed before these toolchains were recognised keep their keys.
  ['tsc', "src/a.ts(3,5): error TS2304: Cannot find name 'x'.", 'TS2304'],
  ['tsc, pretty', "src/a.ts:3:5 - error TS2304: Cannot find name 'x'.", 'TS2304'],
  ['npm code', 'npm error code ELIFECYCLE', 'ELIFECYCLE'],
  ['Node', 'Error [ERR_MODULE_NOT_FOUND]: Cannot find module', 'ERR_MODULE_NOT_FOUND'],
  ['Node, generic', "Error: Cannot find module 'left-pad'", 'left-pad'],
  ['Java', 'Exception in thread "main" java.lang.NullPointerException', 'NullPointerException'],
  ['javac, an exception named', 'Foo.java:30: error: unreported exception FileNotFoundException; must be caught', 'FileNotFoundException'],
  ['Python', "ValueError: invalid literal for int() with base 10: 'x'", 'ValueError'],
  // Localised severities: pre-trim keeps these lines, so the loss report must count them (keyed on the message).
  ['Chinese', '错误：无法连接到数据库', '无法连接到数据库'],
  ['German', 'Fehler: Verbindung zu db.intern:5432 verweigert', 'Verbindung zu db.intern:5432 verweigert'],
  ['German gcc', 'main.c:12:5: Fehler: »x« undeklariert', '»x« undeklariert'],
  ['Russian', 'ошибка: соединение отклонено', 'соединение отклонено'],
  ['French, bracketed', '[ERREUR] échec de la compilation de parser.c', 'parser.c'],
  ['Japanese', 'エラー: ファイルが見つかりません', 'ファイルが見つかりません'],
  ['ninja', 'FAILED: src/CMakeFiles/net.dir/socket.c.o', 'src/CMakeFiles/net.dir/socket.c.o'],
];

describe('error facts are keyed on what failed, not where', () => {
  for (const [tool, line, key] of KEYS) {
    it(`${tool}: ${line}`, () => {
      assert.deepEqual(
        errorsOf(line).map((f) => f.key),
        [key],
      );
    });
  }

  it("a Traceback's first line is no fact of its own: its last line says what failed", () => {
    const trace = ['Traceback (most recent call last):', '  File "app.py", line 3, in <module>', 'QuotaBurstError: 429 from upstream'];
    assert.deepEqual(
      errorsOf(trace.join('\n')).map((f) => f.key),
      ['QuotaBurstError'],
    );
  });

  it('two gcc errors in one file are two facts, and two ESLint errors of one-letter names too', () => {
    const gcc = [
      "src/net/socket.c: In function 'conn_retry':",
      "src/net/socket.c:214:17: error: 'struct conn' has no member named 'retry_budget'",
      "src/net/socket.c:231:9: error: 'struct conn' has no member named 'backoff_ms'",
      "src/net/socket.c:240:3: error: implicit declaration of function 'conn_reset'",
    ];
    assert.deepEqual(
      errorsOf(gcc.join('\n')).map((f) => f.key),
      ['retry_budget', 'backoff_ms', 'conn_reset'],
    );
    const eslint = ['src/a.js', "  1:1  error  'x' is not defined  no-undef", "  2:1  error  'y' is not defined  no-undef"];
    assert.deepEqual(
      errorsOf(eslint.join('\n')).map((f) => f.key),
      ["'x' is not defined", "'y' is not defined"],
    );
  });

  it('a summary that names only the file does not keep the error; one that says what failed does', () => {
    const log = [
      "src/net/socket.c:214:17: error: 'struct conn' has no member named 'retry_budget'",
      "/usr/bin/ld: main.o: in function `main': main.c:(.text+0x1a): undefined reference to `conn_retry'",
      'collect2: error: ld returned 1 exit status',
      'npm ERR! missing script: build',
    ];
    const errors = errorsOf(log.join('\n'));
    assert.equal(errors.length, 4);
    const vague = 'FACTS:\n- The build of src/net/socket.c and main.c failed; /usr/bin/ld and npm were run.';
    assert.deepEqual([...factsKeptIn(errors, [vague])], []);
    const exact =
      'ERRORS:\n- src/net/socket.c:214: struct conn has no member retry_budget.\n- Link: undefined reference to conn_retry (ld returned 1 exit status).\n' +
      '- npm run build: missing script: build.';
    assert.deepEqual([...factsKeptIn(errors, [exact])].sort(), errors.map((f) => f.id).sort());
  });
});
