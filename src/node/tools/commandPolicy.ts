import { resolveWorkspacePath } from './workspacePath';
import { shellWords } from './shellWords';

/**
 * Whether an allowlisted command may run without asking. An allowlist entry
 * is an argument-vector prefix (`git diff` allows `git diff --stat src`), and
 * what follows it is checked too: options that write files, run other
 * programs or move where the program works, and paths that reach outside the
 * workspace, send the call to the user. The match is on parsed words, so
 * quoting cannot smuggle anything. The lists are a denylist, so they lean to
 * asking: a harmless option that looks like a risky one costs one prompt.
 */

/**
 * Long options (matched as `--name` or `--name=value`, in any case: tsc takes `--outDir`) that write a file of the
 * caller's choosing, run another program, or change which tree or folder the tool works on. GNU getopt and git
 * accept any unambiguous abbreviation (`--ou=f` is `--output=f`), so a word that is a prefix of one of these (two
 * letters at least) counts as it.
 */
const RISKY_LONG = [
  '--output',
  '--output-file',
  '--output-directory',
  '--out',
  '--out-file',
  '--outfile',
  '--out-dir',
  '--outdir',
  '--git-dir',
  '--work-tree',
  '--exec-path',
  '--namespace',
  '--super-prefix',
  '--directory',
  '--chdir',
  '--cwd',
  '--prefix',
  '--config',
  '--config-env',
  '--rcfile',
  '--init-file',
  '--upload-pack',
  '--receive-pack',
  '--exec',
  '--exec-batch', // fd
  '--ext-diff',
  '--open-files-in-pager',
  '--global',
  '--system',
  '--file',
  '--log-file',
  '--report-dir',
  '--root',
  '--target-dir',
  '--target-directory', // cp, mv, install
  '--pre', // rg: runs a program on every file it searches
  '--pre-glob',
  '--hostname-bin', // rg: runs a program to name the host in hyperlinks
  '--in-place', // sed, perl-style editors
  '--compress-program', // sort: runs a program on its temporary files
  '--use-compress-program', // tar
  '--delete',
];

/**
 * Complete option names that are prefixes of a risky one but are options in their own right, with the programs
 * where that holds ('*': everywhere). An exact name wins over an abbreviation, so these are not abbreviations there;
 * `--glob` is only rg's and fd's (to git config it abbreviates `--global`).
 */
const OWN_LONG: Record<string, readonly string[]> = {
  '--glob': ['rg', 'fd', 'ugrep'],
  '--ext': ['eslint'], // file extensions; to git diff it abbreviates --ext-diff
  '--target': ['*'], // cargo, rustc, tsc: the build target, not --target-dir
  '--host': ['*'], // dev servers, database clients; only rg has --hostname-bin, and it takes no abbreviations
};

/**
 * Short option letters of the same kinds (`-o` output, `-C` folder, `-O` output or pager). Single-dash words are
 * clusters (`-uo/f` is `-u -o /f`), so the letter counts anywhere in the word; a value glued on may hide one, and
 * then the word asks anyway.
 */
const RISKY_SHORT = 'oCO';

/** Whole words, find's single-dash actions that run a program or write or delete files. */
const RISKY_WORDS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

/**
 * What only some programs make risky, by program name or `program subcommand`. `short` adds letters, `long` adds
 * long options (prefixes count as above); `names` marks a program whose single-dash words are whole names (find:
 * `-name` is not -n -a -m -e); `bundled` one whose first argument may be a cluster without the dash (`tar xf a`).
 */
interface ProgramRule {
  short?: string;
  long?: readonly string[];
  names?: boolean;
  /** Whole single-dash names that are risky for this program (with `names`: Go's flags are words, not letters). */
  words?: readonly string[];
  bundled?: boolean;
}

const PROGRAMS: Record<string, ProgramRule> = {
  // git -c core.pager=… (or core.sshCommand, diff.external, …) runs any program
  git: { short: 'c' },
  // -u is --upload-pack here, a program to run
  'git ls-remote': { short: 'u' },
  'git clone': { short: 'u' },
  // -i edits in place, -e and -f add script commands (w writes, e runs, r reads any file)
  sed: { short: 'ief', long: ['--expression'] },
  // -f, -e add program text, -i includes and -l loads a shared library (gawk)
  awk: { short: 'feilE', long: ['--source', '--include', '--load'] },
  // x extracts, c r u A write an archive, -I runs a compressor, -F a volume script, -g writes a snapshot
  tar: {
    short: 'xcruAIFg',
    long: [
      '--extract',
      '--get',
      '--create',
      '--append',
      '--update',
      '--catenate',
      '--concatenate',
      '--to-command',
      '--checkpoint-action',
      '--info-script',
      '--new-volume-script',
      '--rsh-command',
      '--rmt-command',
      '--index-file',
      '--listed-incremental',
      '--volno-file',
    ],
    bundled: true,
  },
  fd: { short: 'xX' }, // --exec, --exec-batch
  make: { short: 'E', long: ['--eval'] },
  find: { names: true },
  // Go's flags are single-dash words (-count, -cover, -json); these write files or run programs.
  go: {
    names: true,
    words: ['-o', '-C', '-exec', '-toolexec', '-modfile', '-overlay', '-pkgdir', '-outputdir', '-coverprofile', '-cpuprofile'],
  },
};

/** Other names of the programs above. */
const ALIASES: Record<string, string> = {
  gsed: 'sed',
  gawk: 'awk',
  mawk: 'awk',
  nawk: 'awk',
  gtar: 'tar',
  bsdtar: 'tar',
  fdfind: 'fd',
  gmake: 'make',
  gfind: 'find',
  bfs: 'find',
};

/**
 * Programs that run the command they are given: nothing here checks that command, so an entry for one of them never
 * vouches for words after it (`timeout 60 npm test` as an entry runs as written, with nothing added).
 */
const WRAPPERS = new Set(
  (
    'xargs env timeout nice nohup stdbuf time watch sudo doas su runuser setsid chroot flock unshare nsenter strace ltrace ' +
    'ionice taskset chrt parallel exec command builtin eval script firejail busybox'
  ).split(' '),
);

/**
 * Programs that run a script or program named by their first operand (or given with -c/-e): the entry must name
 * it (`node scripts/check.js`, `python -m pytest`, `sed -n 1,5p`), or the model would choose what runs. sed and
 * awk are here because their script language writes files and runs commands (sed w/e, awk system()).
 */
const INTERPRETERS = new Set([
  ...'sh bash zsh dash ksh fish node deno bun perl ruby php lua rscript awk sed npx pnpx bunx'.split(' '),
  ...['npm exec', 'npm x', 'pnpm exec', 'pnpm dlx', 'yarn exec', 'yarn dlx', 'uv run'],
]);
const isInterpreter = (name: string): boolean => INTERPRETERS.has(name) || /^(python|pypy)[\d.]*$/.test(name);

export type CommandVerdict = { ok: true } | { ok: false; why: string };

export function isAllowlisted(command: string, allowlist: readonly string[], root?: string): boolean {
  return checkAllowlisted(command, allowlist, root).ok;
}

export function checkAllowlisted(command: string, allowlist: readonly string[], root?: string): CommandVerdict {
  const words = shellWords(command.trim());
  if (!words || words.length === 0)
    return { ok: false, why: 'the command uses shell features (chaining, redirection, expansion) or is not a simple command' };
  const argv = words.map((w) => w.text);
  // The longest matching entry: it vouches for the most words (`sed -n 1,5p` names the script, `sed` does not).
  const entry = allowlist
    .map((a) => shellWords(a.trim())?.map((w) => w.text))
    .filter((e): e is string[] => e !== undefined && e.length > 0 && e.length <= argv.length && e.every((x, i) => x === argv[i]))
    .reduce<string[] | undefined>((best, e) => (best && best.length >= e.length ? best : e), undefined);
  if (!entry) return { ok: false, why: 'not on the allowlist' };
  const program = programName(argv[0]!);
  // The subcommand: the first word after the program that is not an option (`git --no-pager log`).
  const subAt = argv.findIndex((w, i) => i > 0 && !w.startsWith('-'));
  const sub = subAt > 0 ? `${program} ${argv[subAt]}` : '';
  if (WRAPPERS.has(program) && argv.length > entry.length)
    return { ok: false, why: `${program} runs the command it is given, and only the allowlist entry itself is vouched for` };
  const runner = isInterpreter(sub) ? sub : isInterpreter(program) ? program : '';
  if (runner && !entry.slice(runner === sub ? subAt + 1 : 1).some((w) => !w.startsWith('-')))
    return { ok: false, why: `what ${runner} runs (its script or program) comes from the command, not from the allowlist entry` };
  const rule = mergeRules(PROGRAMS[program], PROGRAMS[sub]);
  // Whose options the words are: the program's, or the tool it starts (`npx eslint --ext .ts`).
  const owners = [program, subAt > 0 ? programName(argv[subAt]!) : ''];
  for (let i = entry.length; i < words.length; i++) {
    const w = words[i]!;
    // tar's first argument may be its option letters without the dash (`tar xf a.tar`).
    const text = rule.bundled && i === 1 && !w.text.startsWith('-') ? `-${w.text}` : w.text;
    const risky = riskyOption(text, owners, rule);
    if (risky) return { ok: false, why: `the option ${risky} can write files, run programs or change where the command works` };
    // bash expands ~ after the = of a word shaped like an assignment (`dd of=~/x`), not only at the start.
    if (w.tilde || /^[A-Za-z_]\w*=~/.test(w.text)) return { ok: false, why: `${w.text} refers to a home folder` };
    if (root !== undefined) {
      if (pathParts(text).some((p) => outsideWorkspace(root, p)))
        return { ok: false, why: `${w.text} refers to a path outside the workspace` };
      if (w.glob && /(^|\/)\.[*?[]/.test(w.text)) return { ok: false, why: `the pattern ${w.text} can match ".."` };
    }
  }
  return { ok: true };
}

/** `/usr/bin/git`, `git.exe` and `gsed` all name the program the rules know as git or sed. */
function programName(word: string): string {
  const base = word
    .slice(Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\')) + 1)
    .toLowerCase()
    .replace(/\.(exe|cmd|bat)$/, '');
  return ALIASES[base] ?? base;
}

/** A program's and its subcommand's rules together, with the options risky for every program: built once per command. */
function mergeRules(a: ProgramRule = {}, b: ProgramRule = {}): ProgramRule {
  return {
    short: RISKY_SHORT + (a.short ?? '') + (b.short ?? ''),
    long: [...RISKY_LONG, ...(a.long ?? []), ...(b.long ?? [])],
    names: a.names === true || b.names === true,
    words: [...(a.words ?? []), ...(b.words ?? [])],
    bundled: a.bundled === true || b.bundled === true,
  };
}

/** `rule` is a mergeRules result: the common risky options are in it. */
function riskyOption(word: string, owners: readonly string[], rule: ProgramRule): string | undefined {
  if (RISKY_WORDS.has(word)) return word;
  const head = word.split('=')[0]!;
  // Go takes -name=value and --name as well as -name value.
  const flag = head.replace(/^--/, '-');
  if (rule.words?.includes(flag)) return flag;
  if (word.startsWith('--')) {
    const name = head.toLowerCase();
    // One letter is enough for getopt when it is unambiguous: sed's --e is --expression, sort's --o is --output.
    if (name.length < 3 || OWN_LONG[name]?.some((p) => p === '*' || owners.includes(p))) return undefined;
    const full = rule.long?.find((o) => o.startsWith(name));
    return full === undefined ? undefined : full === name ? name : `${name} (${full})`;
  }
  if (word.startsWith('-') && word.length > 1 && !rule.names) {
    const hit = [...word.slice(1)].find((c) => rule.short?.includes(c));
    return hit === undefined ? undefined : `-${hit}`;
  }
  return undefined;
}

/**
 * The path-like parts of a word: the word itself, and the value after an `=` (`--opt=value`, `key=value`); for a
 * single-dash cluster whatever follows each letter, since any of them may take the rest as its value (`-uo/path`
 * is `-u -o /path`, `-I../x` is `-I ../x`).
 */
function pathParts(word: string): string[] {
  const eq = word.indexOf('=');
  const value = eq > 0 ? [word.slice(eq + 1)] : [];
  if (word.startsWith('--')) return value;
  if (word.startsWith('-')) return Array.from({ length: Math.max(0, word.length - 2) }, (_, i) => word.slice(i + 2));
  return [word, ...value];
}

/**
 * Every non-option word is treated as a possible path: resolved against the workspace as the kernel would, link by
 * link (`link/..` goes up from where the link points, not back to the workspace), it must stay inside. Words that
 * are not paths (`HEAD~1`, a test name) resolve inside and pass.
 */
export function outsideWorkspace(root: string, given: string): boolean {
  if (given === '') return false;
  try {
    resolveWorkspacePath(root, given);
    return false;
  } catch {
    return true;
  }
}
