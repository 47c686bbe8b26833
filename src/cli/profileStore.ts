/**
 * Where the CLI's planner gets its performance profile: a named calibration
 * (`--profile h100-7b`), a profile JSON file (`--profile ./mine.json`, e.g.
 * written by `bench --calibrate`), or what was learned from this endpoint's
 * timings, kept per endpoint in the user's config directory; else h100-7b.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { H100_7B, NAMED_PROFILES, namedProfile, perfProfileSchema } from '../core/perf/profile';
import type { PerfProfile } from '../core/perf/profile';
import { normalizeBaseURL } from '../llm';
import { readProfileFile } from '../node/profileFile';

/** $SPLITPOINT_PROFILES, else $XDG_CONFIG_HOME/splitpoint/profiles.json, else ~/.config/splitpoint/profiles.json. */
export function learnedProfilesPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SPLITPOINT_PROFILES) return env.SPLITPOINT_PROFILES;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'splitpoint', 'profiles.json');
}

function readStore(path: string): Record<string, PerfProfile> {
  if (!existsSync(path)) return {};
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(
      `the learned profiles file ${path} is not JSON (${(e as Error).message}); move it aside and Splitpoint will start a new one`,
      { cause: e },
    );
  }
  const out: Record<string, PerfProfile> = {};
  for (const [k, v] of Object.entries((json ?? {}) as Record<string, unknown>)) {
    const r = perfProfileSchema.safeParse(v);
    if (r.success) out[k] = r.data;
  }
  return out;
}

export function learnedProfile(endpoint: string, path = learnedProfilesPath()): PerfProfile | undefined {
  return readStore(path)[normalizeBaseURL(endpoint)];
}

/** Stores the profile for the endpoint (write to a temp file, then rename). */
export function saveLearnedProfile(endpoint: string, profile: PerfProfile, path = learnedProfilesPath()): void {
  const store = readStore(path);
  store[normalizeBaseURL(endpoint)] = perfProfileSchema.parse(profile);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(store, null, 2)}\n`);
  renameSync(tmp, path);
}

export interface ResolvedProfile {
  profile: PerfProfile;
  /** named | file | learned | default */
  from: 'named' | 'file' | 'learned' | 'default';
}

/** A name, a file path, the endpoint's learned profile, or h100-7b, in that order. */
export function resolveProfile(spec: string | undefined, endpoint: string, path = learnedProfilesPath()): ResolvedProfile {
  if (spec) {
    const named = namedProfile(spec);
    if (named) return { profile: named, from: 'named' };
    if (existsSync(spec)) return { profile: readProfileFile(spec), from: 'file' };
    throw new Error(`--profile ${spec}: not a named profile (${Object.keys(NAMED_PROFILES).join(', ')}) nor a file`);
  }
  const learned = learnedProfile(endpoint, path);
  return learned ? { profile: learned, from: 'learned' } : { profile: H100_7B, from: 'default' };
}
