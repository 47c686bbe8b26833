import assert from 'node:assert/strict';
import { ERROR_LINE_RE } from '../../src/core/fidelity/patterns';
import { extractFacts } from '../../src/core/fidelity';
import { cutText } from '../../src/core/compaction/toolCuts';
import { DEFAULT_PRETRIM, truncateLargeToolOutputs } from '../../src/core/pretrim';
import { asst, toolPair, user } from './helpers/build';

/** Lines each toolchain prints when something failed: salience keeps them through a cut and extraction counts them. */
const ERROR_LINES: ReadonlyArray<readonly [tool: string, line: string]> = [
  ['gcc', "src/net/socket.c:214:17: error: 'struct conn' has no member named 'retry_budget'"],
  ['gcc, no column', 'src/net/socket.c:214: error: expected expression'],
  ['clang fatal', "src/main.c:3:10: fatal error: 'netdb_ext.h' file not found"],
  ['gcc driver', 'collect2: error: ld returned 1 exit status'],
  ['javac', 'Foo.java:12: error: cannot find symbol'],
  ['MSVC', "a.cpp(12): error C2065: 'retry_budget': undeclared identifier"],
  ['C#', "Program.cs(12,5): error CS0103: The name 'x' does not exist in the current context"],
  ['tsc', "src/a.ts(3,5): error TS2304: Cannot find name 'x'."],
  ['tsc, pretty', "src/a.ts:3:5 - error TS2304: Cannot find name 'x'."],
  ['make', 'make: *** [Makefile:42: build/net/socket.o] Error 1'],
  ['make, recursive', 'make[2]: *** [src/CMakeFiles/net.dir/build.make:76: src/CMakeFiles/net.dir/socket.c.o] Error 1'],
  ['make, no rule', "make: *** No rule to make target 'install'.  Stop."],
  ['ninja', 'FAILED: src/CMakeFiles/net.dir/socket.c.o'],
  ['cmake', 'CMake Error at CMakeLists.txt:12 (add_executable):'],
  ['eslint', "  12:5  error  'x' is not defined  no-undef"],
  ['shell', 'Segmentation fault (core dumped)'],
  ['shell, lower case', 'bash: line 1: 4242 segmentation fault  ./server'],
  ['shell, abort', 'Aborted (core dumped)'],
  ['ld', "ld: undefined reference to 'foo'"],
  ['GNU ld', "/usr/bin/ld: main.o: in function `main': main.c:(.text+0x1a): undefined reference to `foo'"],
  ['GNU ld, library', '/usr/bin/ld: cannot find -lssl'],
  ['macOS ld', 'Undefined symbols for architecture arm64:'],
  ['Go', './main.go:12:2: undefined: Foo'],
  ['Go, unused', './main.go:5:2: declared and not used: x'],
  ['Go panic', 'panic: runtime error: index out of range [3] with length 3'],
  ['Rust', 'error[E0425]: cannot find value `retry_budget` in this scope'],
  ['Python', 'Traceback (most recent call last):'],
  ['Python', "ValueError: invalid literal for int() with base 10: 'x'"],
  ['pytest', 'FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2'],
  ['npm', 'npm ERR! missing script: build'],
  ['npm 10', 'npm error code ELIFECYCLE'],
  ['Node', 'Error [ERR_MODULE_NOT_FOUND]: Cannot find module'],
  ['Java', 'Exception in thread "main" java.lang.NullPointerException'],
  ['git', 'fatal: not a git repository (or any of the parent directories): .git'],
  // Localised toolchains and servers: "error" in the user's language, where a tool puts the severity.
  ['German', 'Fehler: Verbindung zu db.intern:5432 verweigert'],
  ['German, a compound', 'Verbindungsfehler: Zeitüberschreitung nach 30 s'],
  ['German gcc', 'main.c:12:5: Fehler: »x« nicht deklariert'],
  ['German gcc, fatal', 'main.c:3:10: schwerwiegender Fehler: netdb_ext.h: Datei oder Verzeichnis nicht gefunden'],
  ['German PostgreSQL', 'FEHLER:  Relation »users« existiert nicht'],
  ['German psql', 'psql: FEHLER: Passwort-Authentifizierung für Benutzer »app« fehlgeschlagen'],
  ['German, bracketed', '[FEHLER] Datenbank nicht erreichbar'],
  ['French', 'erreur : échec de la connexion à db.intern:5432'],
  ['French, failure', 'Échec : impossible d’ouvrir le fichier'],
  ['French MSVC', "a.cpp(12): erreur C2065 : 'x' : identificateur non déclaré"],
  ['Spanish', 'fallo: no se pudo abrir el archivo'],
  ['Portuguese', 'erro: falha ao conectar ao banco'],
  ['Portuguese, failure', 'falha: tempo esgotado'],
  ['Italian', 'errore: connessione rifiutata'],
  ['Russian', 'ошибка: не удалось подключиться'],
  ['Russian PostgreSQL', 'ОШИБКА:  отношение "users" не существует'],
  ['Chinese', '错误：无法连接到数据库'],
  ['Chinese, a compound', '编译错误：缺少分号'],
  ['Chinese, failure', '连接失败: db.intern:5432'],
  ['Chinese, bracketed', '【错误】连接超时'],
  ['Japanese', 'エラー: 接続できません'],
  ['Korean', '오류: 연결할 수 없습니다'],
];

/** Code, prose and clean summaries that mention errors without reporting one. */
const NOT_ERROR_LINES: readonly string[] = [
  'const errorCount = 0;',
  '// handle the error case',
  'if (err) return;',
  'errors: 0',
  '0 errors, 0 warnings',
  'no error found',
  'Compiled successfully with 0 errors.',
  'src/db/migrate.ts: 41 errors',
  "src/net/socket.c:214:17: warning: unused variable 'retry_budget' [-Wunused-variable]",
  'src/net/socket.c:210:6: note: declared here',
  "  12:5  warning  'x' is assigned a value but never used  no-unused-vars",
  "make: Nothing to be done for 'all'.",
  "make[1]: Entering directory '/work/build'",
  'cc -O2 -Wall -Werror -c src/net/socket.c -o build/net/socket.o',
  // grep -n hits on code lines, which may start with the word.
  'src/net/socket.c:214:\terror = 0;',
  'main.go:12:\terr := run()',
  'return { ok: false, error: undefined };',
  '  expect(result.error).toBeUndefined();',
  'Ran 42 tests in 0.8s',
  // Prose in other languages that says "error" or "failure" without reporting one, and counts of none.
  'Fehler sind menschlich, sagt man.',
  'Fehlerbehandlung: siehe Kapitel 3',
  'Keine Fehler gefunden.',
  'Fehler: 0',
  'fallo: true',
  '  erro: null',
  'Fehler: keine',
  'Fehler: none',
  'log: 3 Fehler: 0',
  'Wir haben den Fehler: gefunden',
  "Pas d'erreur : tout va bien",
  'Il y a une erreur : la clé est absente',
  'Le fichier ne contient aucune erreur.',
  'El fallo del tribunal llegó ayer.',
  'A falha foi corrigida ontem.',
  'errore umano',
  'Это не ошибка, а особенность.',
  '没有错误。',
  '如果出现错误，请重试',
  '错误处理：见第三章',
  'エラーはありません',
  '사용자 오류 보고서',
];

describe('error lines across toolchains', () => {
  for (const [tool, line] of ERROR_LINES) {
    it(`recognises ${tool}: ${line}`, () => {
      assert.equal(ERROR_LINE_RE.test(line), true);
    });
  }

  for (const line of NOT_ERROR_LINES) {
    it(`does not take for an error: ${line}`, () => {
      assert.equal(ERROR_LINE_RE.test(line), false);
    });
  }

  describe('a 900-line log with localised errors in the middle', () => {
    const LOCALISED = ERROR_LINES.filter(([tool]) =>
      /^(German|French|Spanish|Portuguese|Italian|Russian|Chinese|Japanese|Korean)/.test(tool),
    );
    const log = Array.from({ length: 900 }, (_, i) => `  step ${i} finished`);
    LOCALISED.forEach(([, line], k) => (log[300 + 10 * k] = line));
    const msgs = [user('start the service'), ...toolPair('run_command', log.join('\n')), asst('It did not start; reading the log.')];

    it('keeps every one in the cut a compaction worker sees', () => {
      const kept = cutText(msgs, 2).split('\n');
      assert.ok(kept.length < log.length, 'the output was cut');
      for (const [tool, line] of LOCALISED) assert.ok(kept.includes(line), `${tool}: ${line}`);
    });
  });

  describe('a 900-line make log with one failed compile in the middle', () => {
    const GCC_ERROR = "src/net/socket.c:214:17: error: 'struct conn' has no member named 'retry_budget'";
    const MAKE_ERROR = 'make: *** [Makefile:42: build/net/socket.o] Error 1';
    const log = Array.from({ length: 900 }, (_, i) => `cc -O2 -Wall -Iinclude -c src/mod/part${i}.c -o build/mod/part${i}.o`);
    log.splice(449, 4, "src/net/socket.c: In function 'conn_retry':", GCC_ERROR, '  214 |     c->retry_budget--;', MAKE_ERROR);
    const msgs = [user('build it'), ...toolPair('run_command', log.join('\n')), asst('The build stopped; looking at the compile output.')];

    it('keeps the compiler error and the make failure when the output is cut to a small budget', () => {
      const opts = { ...DEFAULT_PRETRIM, maxLines: 40, maxChars: 8000, headLines: 15, tailLines: 15, salience: true };
      const kept = truncateLargeToolOutputs(msgs, opts).messages[2]!.content!.split('\n');
      assert.ok(kept.length <= 40, `${kept.length} lines`);
      assert.ok(kept.includes(GCC_ERROR), 'the gcc error line survives');
      assert.ok(kept.includes(MAKE_ERROR), "make's Error 1 line survives");
    });

    it('keeps both in the cut a compaction worker sees, and counts both as error facts', () => {
      const kept = cutText(msgs, 2).split('\n');
      assert.ok(kept.length < log.length, 'the output was cut');
      assert.ok(kept.includes(GCC_ERROR) && kept.includes(MAKE_ERROR));
      const errors = extractFacts(msgs).filter((f) => f.kind === 'error');
      assert.deepEqual(
        errors.map((f) => [f.text, f.position]),
        [
          [GCC_ERROR, 'long-output-middle'],
          [MAKE_ERROR, 'long-output-middle'],
        ],
      );
    });
  });
});
