import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolInputError } from '../../core/agent/tools';

/**
 * Resolves a path the model gave against the workspace and refuses anything
 * outside it, including through symlinks (the check runs on the real path of
 * the nearest existing ancestor).
 */
export async function resolveInWorkspace(root: string, given: string): Promise<string> {
  if (given.includes('\0')) throw new ToolInputError('path contains a NUL byte');
  const abs = isAbsolute(given) ? resolve(given) : resolve(root, given);
  const realRoot = await realpath(root);
  let probe = abs;
  for (;;) {
    try {
      const real = await realpath(probe);
      const rest = relative(probe, abs);
      const full = rest ? resolve(real, rest) : real;
      if (full !== realRoot && !full.startsWith(realRoot + sep)) throw new ToolInputError(`"${given}" is outside the workspace`);
      return full;
    } catch (err) {
      if (err instanceof ToolInputError) throw err;
      const parent = resolve(probe, '..');
      if (parent === probe) throw new ToolInputError(`"${given}" is outside the workspace`);
      probe = parent;
    }
  }
}

export function displayPath(root: string, abs: string): string {
  const r = relative(root, abs);
  return r === '' ? '.' : r.split(sep).join('/');
}
