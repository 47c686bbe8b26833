import { resolveWorkspacePath } from './workspacePath';
import { shellWords } from './shellWords';

/**
 * Whether an allowlisted command may run without asking. An allowlist entry
 * is an argument-vector prefix (`git diff` allows `git diff --stat src`), and
 * what follows it is checked too: options that write files or move where the
 * program works, and paths that reach outside the workspace, send the call to
 * the user. The match is on parsed words, so quoting cannot smuggle anything.
 */

/**
 * Long options (matched as `--name` or `--name=value`) that write a file of
 * the caller's choosing, run another program, or change which tree or folder
 * the tool works on.
 */
const RISKY_LONG = new Set([
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
  '--ext-diff',
  '--open-files-in-pager',
  '--global',
  '--system',
  '--file',
  '--log-file',
  '--report-dir',
  '--root',
  '--target-dir',
]);

/** Short options (alone or with a value glued on, e.g. `-ofile`, `-C..`) of the same kinds. */
const RISKY_SHORT = ['-o', '-C', '-O'];

export type CommandVerdict = { ok: true } | { ok: false; why: string };

export function isAllowlisted(command: string, allowlist: readonly string[], root?: string): boolean {
  return checkAllowlisted(command, allowlist, root).ok;
}

export function checkAllowlisted(command: string, allowlist: readonly string[], root?: string): CommandVerdict {
  const words = shellWords(command.trim());
  if (!words || words.length === 0)
    return { ok: false, why: 'the command uses shell features (chaining, redirection, expansion) or is not a simple command' };
  const argv = words.map((w) => w.text);
  const entry = allowlist
    .map((a) => shellWords(a.trim())?.map((w) => w.text))
    .find((e): e is string[] => e !== undefined && e.length > 0 && e.length <= argv.length && e.every((x, i) => x === argv[i]));
  if (!entry) return { ok: false, why: 'not on the allowlist' };
  for (let i = entry.length; i < words.length; i++) {
    const w = words[i]!;
    const risky = riskyOption(w.text);
    if (risky) return { ok: false, why: `the option ${risky} can write files or change where the command works` };
    if (w.tilde) return { ok: false, why: `${w.text} refers to a home folder` };
    if (root !== undefined) {
      const value = optionValue(w.text);
      if (value !== undefined && outsideWorkspace(root, value))
        return { ok: false, why: `${w.text} refers to a path outside the workspace` };
      if (w.glob && /(^|\/)\.[*?[]/.test(w.text)) return { ok: false, why: `the pattern ${w.text} can match ".."` };
    }
  }
  return { ok: true };
}

function riskyOption(word: string): string | undefined {
  if (word.startsWith('--')) {
    const name = word.split('=')[0]!;
    return RISKY_LONG.has(name) ? name : undefined;
  }
  if (word.startsWith('-') && word.length > 1) return RISKY_SHORT.find((s) => word.startsWith(s));
  return undefined;
}

/** The path-like part of a word: the word itself, or the value of `--opt=value`; undefined for plain options. */
function optionValue(word: string): string | undefined {
  if (word.startsWith('-')) {
    const eq = word.indexOf('=');
    return eq > 0 ? word.slice(eq + 1) : undefined;
  }
  return word;
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
