/**
 * The planner's performance profile in the extension: the setting
 * `splitpoint.compaction.profile` (a named calibration or a profile JSON
 * file, e.g. written by `splitpoint bench --calibrate`), else the profile
 * learned for the compaction endpoint (kept in globalState, see
 * profileMemo.ts), else h100-7b. A bad file never stops a compaction: the
 * problem is reported and the fallback used. No vscode import (unit tested).
 */
import { isAbsolute, join } from 'node:path';
import { ProfileLearner } from '../core/perf/learn';
import type { DecodeObservation, PrefillObservation } from '../core/perf/learn';
import { H100_7B, NAMED_PROFILES, namedProfile } from '../core/perf/profile';
import type { PerfProfile } from '../core/perf/profile';
import type { MementoLike } from '../core/perf/profileMemo';
import { profileFor, rememberProfile } from '../core/perf/profileMemo';
import type { TimingSink } from '../llm/timing';
import { readProfileFile } from '../node/profileFile';

export const PROFILE_SETTING = 'splitpoint.compaction.profile';

export interface HostProfile {
  profile: PerfProfile;
  from: 'named' | 'file' | 'learned' | 'default';
  /** Set when the setting could not be used: what is wrong and how to fix it. */
  problem?: string;
}

/** `baseDir` resolves a relative file path (the first workspace folder). */
export function resolveHostProfile(setting: string | undefined, endpoint: string, memo: MementoLike, baseDir?: string): HostProfile {
  const spec = setting?.trim();
  if (spec) {
    const named = namedProfile(spec);
    if (named) return { profile: named, from: 'named' };
    const path = isAbsolute(spec) || !baseDir ? spec : join(baseDir, spec);
    try {
      return { profile: readProfileFile(path), from: 'file' };
    } catch (e) {
      const fallback = unset(endpoint, memo);
      const names = Object.keys(NAMED_PROFILES).join(', ');
      const problem =
        `${PROFILE_SETTING} "${spec}" is neither a named profile (${names}) nor a valid profile file: ${(e as Error).message}. ` +
        `Using ${fallback.profile.name} instead; fix the file (splitpoint bench --calibrate writes one) or clear the setting.`;
      return { ...fallback, problem };
    }
  }
  return unset(endpoint, memo);
}

function unset(endpoint: string, memo: MementoLike): HostProfile {
  const profile = profileFor(memo, endpoint, undefined);
  // profileFor hands back H100_7B itself when nothing valid is stored for the endpoint.
  return { profile, from: profile === H100_7B ? 'default' : 'learned' };
}

/**
 * Feeds the agent's own request timings (TimedModel) into a ProfileLearner
 * and stores the refit for the endpoint every `every` prefill observations,
 * so the planner's learned profile follows the server.
 */
export class ProfileRefresher implements TimingSink {
  private readonly learner: ProfileLearner;
  private seen = 0;

  constructor(
    private readonly memo: MementoLike,
    private readonly endpoint: string,
    private readonly onError: (message: string) => void,
    private readonly every = 8,
  ) {
    this.learner = new ProfileLearner(profileFor(memo, endpoint, undefined));
  }

  addPrefill(o: PrefillObservation): void {
    this.learner.addPrefill(o);
    if (++this.seen % this.every === 0) void this.save();
  }

  addDecode(o: DecodeObservation): void {
    this.learner.addDecode(o);
  }

  /** Refits now and stores the result; resolves once stored. */
  async save(): Promise<PerfProfile> {
    const n = this.learner.observations.prefill.length;
    const profile = this.learner.profile(`learned ${this.endpoint}`, `learned from the last ${n} agent requests`);
    try {
      await rememberProfile(this.memo, this.endpoint, profile);
    } catch (e) {
      this.onError(`could not store the learned profile: ${(e as Error).message}`);
    }
    return profile;
  }
}
