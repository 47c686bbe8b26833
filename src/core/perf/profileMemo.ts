/**
 * The learned profiles as the host keeps them: one map in VS Code's
 * globalState (any Memento-like store), keyed by endpoint. The host calls
 * `profileFor` when it builds compaction settings and `rememberProfile` after
 * learning (bench --calibrate output imported, or a ProfileLearner refit).
 */
import type { PerfProfile } from './profile';
import { H100_7B, namedProfile, perfProfileSchema } from './profile';

export interface MementoLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

/**
 * The profiles stored under the first key were learned from the times the paced transport handed the stream on at,
 * ~100 ms batches, so each taught the planner a prefill of at least that: they are not read, and go at the next save.
 */
export const PROFILES_KEY = 'splitpoint.perfProfiles.v2';
const STALE_KEYS = ['splitpoint.perfProfiles'];

const key = (endpoint: string) => endpoint.trim().replace(/\/+$/, '');

/** The setting's named profile, else the one learned for the endpoint, else h100-7b; a stored profile that fails the schema is ignored. */
export function profileFor(memo: MementoLike, endpoint: string, setting: string | undefined): PerfProfile {
  if (setting) {
    const named = namedProfile(setting);
    if (named) return named;
  }
  const stored = memo.get<Record<string, unknown>>(PROFILES_KEY)?.[key(endpoint)];
  const r = stored === undefined ? undefined : perfProfileSchema.safeParse(stored);
  return r?.success ? r.data : H100_7B;
}

export async function rememberProfile(memo: MementoLike, endpoint: string, profile: PerfProfile): Promise<void> {
  const all = { ...(memo.get<Record<string, unknown>>(PROFILES_KEY) ?? {}) };
  all[key(endpoint)] = perfProfileSchema.parse(profile);
  await memo.update(PROFILES_KEY, all);
  for (const k of STALE_KEYS) if (memo.get(k) !== undefined) await memo.update(k, undefined);
}
