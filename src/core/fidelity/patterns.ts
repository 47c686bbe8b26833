/**
 * The regular expressions that recognise checkable tokens. Shared by fact
 * extraction, salience-aware pre-trim and the survival check, so that what
 * counts as a fact is the same everywhere.
 */

const EXT =
  'ts|tsx|js|jsx|mjs|cjs|json|md|py|rs|go|java|kt|c|h|cc|cpp|hpp|rb|php|yaml|yml|toml|sh|txt|css|scss|html|sql|lock|ini|cfg|env|conf|xml|proto|csv|log';

/** A path with a directory, or a bare file name with a known extension. */
export const PATH_RE = new RegExp(
  String.raw`(?<![\w/:.@-])((?:\.{1,2}/|~/|/)?(?:[\w@.-]+/)+[\w@.-]*[\w]|[\w-]+(?:\.[\w-]+)*\.(?:${EXT}))(?![\w/-])`,
  'g',
);

/** Identifiers with a capital inside; a text without a capital has none. */
const CAPITAL_IDENT_RES: readonly RegExp[] = [
  /\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+[A-Z]?\b/g, // camelCase
  /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g, // PascalCase with an inner capital
];
/** Identifiers joined by underscores; a text without an underscore has none. */
const UNDERSCORE_IDENT_RES: readonly RegExp[] = [
  /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g, // snake_case
  /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, // SCREAMING_CASE
];
/** All four, in the order identifiersIn reports their matches. */
export const IDENT_RES: readonly RegExp[] = [...CAPITAL_IDENT_RES, ...UNDERSCORE_IDENT_RES];

const UNITS =
  'ms|us|µs|ns|s|sec|secs|seconds|min|mins|minutes|h|hours|days|KB|MB|GB|TB|KiB|MiB|GiB|kB|bytes|B|' +
  'tokens|px|rps|qps|req/s|rows|lines|files|workers|connections|retries|threads|cores|MHz|GHz|x';

/** A number with a unit ("250 ms", "512MiB", "85%"), or a dotted version ("v2.4.1"). */
export const NUMBER_RE = new RegExp(String.raw`(?<![\w.])(\d+(?:\.\d+)?)\s?(%|(?:${UNITS})\b)|(?<![\w.])(v?\d+\.\d+\.\d+)\b(?!\.\d)`, 'g');

const GENERIC_ERRORS = new Set([
  'Error',
  'TypeError',
  'SyntaxError',
  'ReferenceError',
  'RangeError',
  'AssertionError',
  'Exception',
  'RuntimeError',
  'ValueError',
  'KeyError',
]);

export const EXCEPTION_RE = /\b([A-Z][A-Za-z0-9]*(?:Error|Exception))\b/g;
export const ERROR_CODE_RE = /\b(E[A-Z]{3,}|E_[A-Z0-9_]+|TS\d{4,5}|ERR_[A-Z0-9_]+)\b/g;

/**
 * "Error" and "failure" in the languages toolchains and servers are localised to (German, French, Spanish,
 * Portuguese, Italian, Russian, Ukrainian, Chinese, Japanese, Korean; Spanish "error" is English's). In string
 * literals, which the bundle escapes (test/unit/bundleCharset.test.ts says why), not in a regular expression literal.
 */
const LOCAL_ERROR_WORDS = ['fehler', 'erreur', 'échec', 'fallo', 'erro', 'falha', 'errore', 'ошибка', 'помилка'];
/** Words of scripts without case, which a compound can end in ("编译错误：", "接続エラー："). */
const LOCAL_ERROR_WORDS_UNCASED = ['错误', '錯誤', '失败', '失敗', 'エラー', '오류', '에러'];

/** A character as a pattern escape, so that the pattern's source stays one byte per character. */
function reChar(c: string): string {
  const code = c.charCodeAt(0);
  return code > 0x7e ? `\\u${code.toString(16).padStart(4, '0')}` : escapeRe(c);
}

/** Lower case, capitalised and upper case, the ways a tool prints a severity word (the patterns here are case-sensitive). */
function localErrorWords(): string {
  const forms = new Set<string>();
  for (const w of LOCAL_ERROR_WORDS) for (const f of [w, w[0]!.toUpperCase() + w.slice(1), w.toUpperCase()]) forms.add(f);
  for (const w of LOCAL_ERROR_WORDS_UNCASED) forms.add(w);
  return [...forms].map((f) => [...f].map(reChar).join('')).join('|');
}

/**
 * A localised error line. The word must stand where a tool puts a severity: at the line's start or after a location
 * or program prefix ("main.c:12:5: Fehler:", "psql: FEHLER:"), with a colon (ASCII or full-width, French spacing
 * allowed) or in brackets ("[ERREUR]"). Prose says these words too, but not as a line's "word:" head: "Fehler sind
 * menschlich", "Fehlerbehandlung: siehe unten", "没有错误。" do not match, nor a count ("Fehler: 0", "erreurs : 0").
 * German compounds ("Verbindungsfehler:") and a CJK compound ending in the word ("连接失败：") count as the word.
 */
function localisedErrorPatterns(): string[] {
  const w = localErrorWords();
  const colon = String.raw`\s*[:\uff1a]`;
  // Nor a count or a setting's value: "Fehler: 0", "fallo: true", "erro: null", "Fehler: keine".
  const notACount = String.raw`(?!\s*(?:\d+|true|false|null|none|keine|aucune|ninguno|nenhum|nessuno)\s*,?\s*$)`;
  const uncased = LOCAL_ERROR_WORDS_UNCASED.map((x) => [...x].map(reChar).join('')).join('|');
  const germanCompound = String.raw`[A-Z\u00c4\u00d6\u00dc][a-z\u00df\u00e4\u00f6\u00fc]*(?:fehler|FEHLER)`;
  return [
    String.raw`^\s*(?:${w}|${germanCompound})${colon}${notACount}`,
    String.raw`^\s*[[(\u3010](?:${w})[\])\u3011]`,
    String.raw`^\s*[^\s:\uff1a]{1,12}?(?:${uncased})${colon}${notACount}`,
    // After a location or a program: "main.c:12:5: Fehler:", "a.cpp(12): erreur C2065 :", "psql: FEHLER:"; a word
    // before or after the severity as compilers print it ("schwerwiegender Fehler:", "erreur fatale :").
    String.raw`(?::\d+(?::\d+)?|\(\d+(?:,\d+)*\)|^\s*[\w./+-]+)${colon}\s*(?:[^\s:\uff1a]+\s+)?(?:${w})(?:\s+[^\s:\uff1a]+)?${colon}${notACount}`,
  ];
}

/**
 * A line that reports a failure, whatever the tool printed it. Toolchains put the word "error" after a location or
 * their own name, not at the start, so those shapes are matched where they stand; a bare "error" mid-line is not
 * enough, since prose and code say it all the time ("errors: 0", "handle the error case").
 */
export const ERROR_LINE_RE = new RegExp(
  [
    String.raw`\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b`,
    String.raw`\b(?:E[A-Z]{3,}|E_[A-Z0-9_]+|ERR_[A-Z0-9_]+)\b`,
    String.raw`^\s*(?:error|ERROR|Error|FATAL|fatal|panic|Traceback)\b`,
    String.raw`\berror TS\d+|\bfailed with\b|\b[Ss]egmentation fault\b|\(core dumped\)`,
    // "file:12:5: error:", "file(12,5): error C2065:", "collect2: error:"; the colon after "error" keeps a grep hit
    // on a code line that starts with the word ("a.c:12:error = 0;") out.
    String.raw`(?::\d+(?::\d+)?|\(\d+(?:,\d+)*\)|^\s*[\w./+-]+):\s*(?:fatal\s+)?error(?:\s+[A-Z]+\d+)?:`,
    // ESLint's stylish format: "  12:5  error  'x' is not defined  no-undef".
    String.raw`^\s*\d+:\d+\s+error\s`,
    // make and ninja mark a failed target by their own prefix; make's trailing "Error 1" alone is too common a phrase.
    String.raw`^\s*(?:g|mingw32-)?make(?:\[\d+\])?: \*\*\*|^FAILED: \S|\bCMake Error\b`,
    String.raw`\bundefined reference to\b|\bUndefined symbols for architecture\b|\bsymbol\(s\) not found\b|\bcannot find -l\S`,
    // The Go compiler and vet print "file.go:line:col: message" for diagnostics only, without a severity word.
    String.raw`\.go:\d+:\d+: \S`,
    String.raw`^\s*npm (?:ERR!|error) `,
    ...localisedErrorPatterns(),
  ].join('|'),
);

/**
 * What a localised severity says failed: the message after "Fehler:", "erreur :", "错误：" and the like (the words
 * and shapes of localisedErrorPatterns), for the error fact's key, as SEVERITY_RE reads "error: msg".
 */
export const LOCALISED_SEVERITY_RE = new RegExp(
  String.raw`(?:^|[\s:([)\]\u3010\u3011])(?:${localErrorWords()})\s*[:\uff1a\])\u3011]\s*:?\s*(\S.*)$`,
);

/** A severity word in capitals ("ERREUR", "FEHLER"): the shape of an error code, but no code. */
export function isLocalisedSeverity(word: string): boolean {
  return LOCAL_ERROR_WORDS.includes(word.toLowerCase());
}

export function isGenericError(name: string): boolean {
  return GENERIC_ERRORS.has(name);
}

export interface TestLine {
  name: string;
  status: 'passed' | 'failed';
}

/** Verdict marks: ✓ ✔ √ passed, ✗ ✖ × failed, written as escapes (test/unit/bundleCharset.test.ts says why). */
const TEST_RES: ReadonlyArray<{
  re: RegExp;
  status: (m: RegExpMatchArray) => 'passed' | 'failed';
  name: (m: RegExpMatchArray) => string;
}> = [
  {
    re: /^\s*(?:[\u2713\u2714\u221A]|PASS(?:ED)?|ok\s+\d+\s*-)\s+(.+?)\s*(?:\(\d+\s?m?s\))?\s*$/,
    status: () => 'passed',
    name: (m) => m[1]!,
  },
  {
    re: /^\s*(?:[\u2717\u2716\u00D7]|FAIL(?:ED)?|not ok\s+\d+\s*-)\s+(.+?)\s*(?:\(\d+\s?m?s\))?\s*$/,
    status: () => 'failed',
    name: (m) => m[1]!,
  },
  { re: /^\s*(\S+::\S+)\s+(PASSED|FAILED)\b/, status: (m) => (m[2] === 'PASSED' ? 'passed' : 'failed'), name: (m) => m[1]! },
];

/**
 * No runner prints a verdict line this long (a name is at most 160 characters), and the verdict patterns' lazy name
 * takes seconds on a 10 MB line that starts like one.
 */
const MAX_TEST_LINE = 1000;

/**
 * What any of TEST_RES needs: a first character that can begin a verdict, or a pytest verdict word. One cheap
 * pattern turns away the lines that are not test results (nearly all), instead of three.
 */
const TEST_HINT_RE = /^\s*[\u2713\u2714\u221A\u2717\u2716\u00D7PFon]|PASSED|FAILED/;

/** A test-runner line ("✓ parses headers", "FAIL test/x.test.ts", "t.py::test_a FAILED"). */
export function testLine(line: string): TestLine | undefined {
  if (line.length > MAX_TEST_LINE || !TEST_HINT_RE.test(line)) return undefined;
  return verdictOf(line);
}

/** What the verdict patterns find in a line, without testLine's shortcuts (its tests compare the two). */
export function verdictOf(line: string): TestLine | undefined {
  for (const t of TEST_RES) {
    const m = line.match(t.re);
    if (m) {
      const name = t.name(m).replace(/\s+/g, ' ').trim();
      if (name.length >= 3 && name.length <= 160) return { name, status: t.status(m) };
    }
  }
  return undefined;
}

export const DECISION_RE =
  /\b(?:DECISION|Decision|decided|decide to|we'll use|we will use|going with|opted for|chose|switch(?:ed)? to|settled on)\b/;
export const CONSTRAINT_RE =
  /\b(?:CONSTRAINT|Constraint|must not|must never|must always|never|always|do not|don't|at most|at least|no more than|is forbidden|not allowed)\b/i;
export const INSTRUCTION_RE =
  /^(?:INSTRUCTION:|please\b|make sure\b|use\b|add\b|run\b|keep\b|remember\b|avoid\b|prefer\b|fix\b|update\b|rename\b|write\b|set\b|put\b|call\b|limit\b)/i;

export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The longest text one pattern run sees. Some patterns repeat a group (a path's directories, a camelCase word's
 * humps), and V8 keeps a backtracking entry per repetition: on a 10 MB line of `a/a/a/…` or `aBaB…` the run threw
 * "Maximum call stack size exceeded", and the loss report with it. Ordinary lines are far shorter and see no change.
 */
const SCAN_WINDOW = 8192;

/**
 * Calls `each` for every match of a global regex, from the start of the text, with `index` into the whole text. A
 * loop of `exec` on the shared regex, not `matchAll`: matchAll clones the regex on every call, and these scanners
 * run once per line of every tool output (about 100,000 calls on a 120K-token head), where the clones and their
 * iterators were a third of the scan. Synchronous, so no other caller can see the regex's `lastIndex` between the
 * reset and the end. A longer text is run in windows that end after a line break or space where there is one
 * (tokens hold no whitespace, bar a number's space before its unit), else at SCAN_WINDOW.
 */
function eachMatch(re: RegExp, text: string, each: (m: RegExpExecArray) => void): void {
  for (let start = 0; start < text.length;) {
    const end = windowEnd(text, start);
    const window = start === 0 && end === text.length ? text : text.slice(start, end);
    re.lastIndex = 0;
    for (let m = re.exec(window); m !== null; m = re.exec(window)) {
      // An empty match would find itself forever (none of the patterns here can match empty; this keeps it so).
      if (m[0].length === 0) re.lastIndex++;
      m.index += start;
      each(m);
    }
    start = end;
  }
  re.lastIndex = 0;
}

/** Where the window from `start` ends: after the last line break, else space, in its last quarter, else at the limit. */
function windowEnd(text: string, start: number): number {
  const limit = start + SCAN_WINDOW;
  if (limit >= text.length) return text.length;
  // Searched by hand: lastIndexOf would go on to the start of a text without one.
  const floor = limit - SCAN_WINDOW / 4;
  let space = -1;
  for (let i = limit - 1; i >= floor; i--) {
    const c = text.charCodeAt(i);
    if (c === 10) return i + 1;
    if (c === 32 && space < 0) space = i;
  }
  return space >= 0 ? space + 1 : limit;
}

/** Every match of a global regex's first defined group (or whole match). */
export function allMatches(re: RegExp, text: string): string[] {
  const out: string[] = [];
  eachMatch(re, text, (m) => {
    let g: string | undefined;
    for (let i = 1; i < m.length && g === undefined; i++) g = m[i];
    out.push(g ?? m[0]);
  });
  return out;
}

/** A path found in a text, and where (the pattern's lookarounds are empty, so the match is the path). */
export interface PathMatch {
  path: string;
  index: number;
}

export function pathMatches(text: string): PathMatch[] {
  const out: PathMatch[] = [];
  // Every path has a slash or a dot: most lines of prose and logs have neither, and the pattern is the costliest here.
  if (!text.includes('/') && !text.includes('.')) return out;
  eachMatch(PATH_RE, text, (m) => {
    const p = m[1]!;
    if (!/^\d+(\.\d+)*$/.test(p) && !p.includes('://') && !/^\.+$/.test(p)) out.push({ path: p, index: m.index });
  });
  return out;
}

export function pathsIn(text: string): string[] {
  return pathMatches(text).map((m) => m.path);
}

/** The text with every path found in it blanked to one space: what is left for the identifier patterns. */
export function withoutPaths(text: string, paths: readonly PathMatch[]): string {
  if (paths.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const { path, index } of paths) {
    parts.push(text.slice(from, index));
    from = index + path.length;
  }
  parts.push(text.slice(from));
  return parts.join(' ');
}

const UPPER_RE = /[A-Z]/;

export function identifiersIn(text: string): string[] {
  // Many lines of output have neither a capital nor an underscore: they skip all four patterns.
  const out: string[] = [];
  if (UPPER_RE.test(text)) for (const re of CAPITAL_IDENT_RES) eachMatch(re, text, (m) => out.push(m[0]));
  if (text.includes('_')) for (const re of UNDERSCORE_IDENT_RES) eachMatch(re, text, (m) => out.push(m[0]));
  return out;
}

const DIGIT_RE = /\d/;

/** Numbers with units, normalised to "250 ms" form (one space, unit kept as written). */
export function numbersIn(text: string): string[] {
  const out: string[] = [];
  if (!DIGIT_RE.test(text)) return out;
  eachMatch(NUMBER_RE, text, (m) => {
    if (m[3] !== undefined) out.push(m[3]);
    else if (m[1] !== undefined && m[2] !== undefined) out.push(m[2] === '%' ? `${m[1]}%` : `${m[1]} ${m[2]}`);
  });
  return out;
}
