/**
 * Reads a performance profile file (written by `splitpoint bench --calibrate`
 * or by hand) for the CLI, the extension host and the simulator alike; the
 * error names the file and the bad fields, so the user knows what to fix.
 */
import { readFileSync } from 'node:fs';
import { perfProfileSchema } from '../core/perf/profile';
import type { PerfProfile } from '../core/perf/profile';

export function readProfileFile(path: string): PerfProfile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read profile file ${path}: ${(e as Error).message}`, { cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`profile file ${path} is not JSON: ${(e as Error).message}`, { cause: e });
  }
  const parsed = perfProfileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`profile file ${path} is not a valid performance profile (${issues})`);
  }
  return parsed.data;
}
