/**
 * Splits a POSIX shell command line into its argument vector, the way
 * /bin/sh would for a simple command, so the allowlist can look at the
 * words the program will actually receive. No npm shell-words parser is
 * installed in this project, hence this small one (tested in
 * test/unit/shellWords.test.ts and fuzzed in test/fuzz).
 *
 * Anything a simple command cannot contain without the shell doing more than
 * splitting (expansions, substitutions, redirections, chaining, globs that
 * reach dot-entries) makes the result `undefined`: the caller then asks the
 * user instead of guessing.
 */
export interface ShellWord {
  text: string;
  /** An unquoted glob character (* ? [) appears: the shell may expand the word. */
  glob: boolean;
  /** The word began with an unquoted ~ (the shell expands it to a home folder). */
  tilde: boolean;
}

const OPERATORS = new Set([';', '&', '|', '<', '>', '(', ')', '`', '\n', '\r']);

export function shellWords(line: string): ShellWord[] | undefined {
  const words: ShellWord[] = [];
  let cur: ShellWord | undefined;
  const start = (): ShellWord => (cur ??= { text: '', glob: false, tilde: false });
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      if (cur) words.push(cur);
      cur = undefined;
      i++;
    } else if (OPERATORS.has(c) || c === '$') {
      return undefined;
    } else if (c === '#' && !cur) {
      // A comment runs to the end of the line; what follows is not run, but it is odd enough to ask.
      return undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      start().text += line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const w = start();
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        const d = line[i]!;
        if (d === '"') break;
        // Inside double quotes $ and ` still expand.
        if (d === '$' || d === '`') return undefined;
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) {
          if (line[i + 1] === '\n') return undefined;
          w.text += line[i + 1];
          i += 2;
        } else {
          w.text += d;
          i++;
        }
      }
      i++;
    } else if (c === '\\') {
      if (i + 1 >= line.length || line[i + 1] === '\n') return undefined;
      start().text += line[i + 1];
      i += 2;
    } else {
      const w = start();
      if (c === '~' && w.text === '') w.tilde = true;
      if (c === '*' || c === '?' || c === '[') w.glob = true;
      if (c === '{' || c === '}') return undefined; // brace expansion (bash) could produce anything
      w.text += c;
      i++;
    }
  }
  if (cur) words.push(cur);
  return words;
}
