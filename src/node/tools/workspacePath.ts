import { constants, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolInputError } from '../../core/agent/tools';

/**
 * Resolves a path the model gave against the workspace, following every
 * symbolic link on the way, the last component's included, even when its
 * target does not exist yet: a dangling link to a file outside the workspace
 * is refused like any other path outside it (the old check fell back to the
 * parent folder, and writeFile then followed the link out). Anything below a
 * missing folder cannot be a link, so the rest is appended as written.
 */
export interface ResolvedPath {
  /** The real absolute path, with every link resolved. */
  path: string;
  /** Set when the given path went through a link: what it is, for the approval prompt. */
  link?: string;
}

const MAX_LINKS = 40;

export function resolveWorkspacePath(root: string, given: string): ResolvedPath {
  if (given.includes('\0')) throw new ToolInputError('path contains a NUL byte');
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    throw new ToolInputError(`the workspace folder ${root} does not exist`);
  }
  // Not normalised first: `link/../x` must go up from where the link points, as the kernel does.
  const parts = [...(isAbsolute(given) ? [] : resolve(root).split(sep)), ...given.split(sep === '/' ? '/' : /[\\/]/)].filter(Boolean);
  let done = sep === '/' ? '/' : `${parts.shift()}${sep}`;
  let hops = 0;
  let link: string | undefined;
  while (parts.length > 0) {
    const name = parts.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      done = dirname(done);
      continue;
    }
    const next = resolve(done, name);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      // Missing: nothing below it exists, so no link can redirect the rest, unless the rest climbs back out of it.
      // The kernel would refuse `missing/../x` (missing does not exist); resolved as text it would become `x`, a
      // path whose links were never looked at (`missing/../link/secret` read through `link`).
      if (parts.includes('..'))
        throw new ToolInputError(`"${given}" goes up (..) out of ${displayPath(realRoot, next)}, which does not exist`);
      done = resolve(next, ...parts);
      break;
    }
    if (!isLink) {
      done = next;
      continue;
    }
    if (++hops > MAX_LINKS) throw new ToolInputError(`"${given}" goes through too many symbolic links`);
    const target = readlinkSync(next);
    const to = resolve(done, target);
    link ??= `${displayPath(realRoot, next)} is a link to ${target}`;
    parts.unshift(...to.split(sep).filter(Boolean));
    done = sep === '/' ? '/' : `${parts.shift()}${sep}`;
  }
  if (!isUnder(realRoot, done)) {
    throw new ToolInputError(link ? `"${given}" is outside the workspace (${link})` : `"${given}" is outside the workspace`);
  }
  return link ? { path: done, link } : { path: done };
}

/** Whether a resolved path is the resolved root or inside it. */
function isUnder(realRoot: string, real: string): boolean {
  return real === realRoot || real.startsWith(realRoot + sep);
}

/**
 * For a listing that follows links (VS Code's findFiles follows symlinked folders): whether a listed file's folder
 * is really inside the workspace. Folders are resolved once each, so a listing of thousands of files costs a
 * realpath per folder.
 */
export function insideWorkspace(root: string): (path: string) => boolean {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return () => false;
  }
  const dirs = new Map<string, boolean>();
  return (path) => {
    const dir = dirname(path);
    let ok = dirs.get(dir);
    if (ok === undefined) {
      try {
        const real = realpathSync(dir);
        ok = isUnder(realRoot, real);
      } catch {
        ok = false;
      }
      dirs.set(dir, ok);
    }
    return ok;
  };
}

/** The real path inside the workspace, or a ToolInputError naming why not. */
export async function resolveInWorkspace(root: string, given: string): Promise<string> {
  return resolveWorkspacePath(root, given).path;
}

/** For describe(): a note on the link a path goes through, or on why it is refused. */
export function linkNote(root: string, given: unknown): string {
  if (typeof given !== 'string' || given === '') return '';
  try {
    const r = resolveWorkspacePath(root, given);
    return r.link ? ` (${r.link})` : '';
  } catch (err) {
    return ` (refused: ${(err as Error).message})`;
  }
}

/**
 * Writes a file without following a link at its last component (O_NOFOLLOW):
 * if a link was swapped in after the path was checked, the write fails
 * instead of landing where the link points.
 */
export async function writeNoFollow(path: string, text: string): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);
  let fh;
  try {
    fh = await open(path, flags, 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw new ToolInputError(`${path} became a symbolic link after it was checked; not written`);
    throw err;
  }
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}

export function displayPath(root: string, abs: string): string {
  const r = relative(root, abs);
  return r === '' ? '.' : r.split(sep).join('/');
}
