import { writeFileSync } from 'node:fs';
import { H100_7B, namedProfile } from '../core/perf/profile';
import { UsageError } from './args';
import { calibrate } from './calibrate';
import { connect } from './endpoint';
import type { CliIO } from './io';
import { learnedProfilesPath, saveLearnedProfile } from './profileStore';

export const CALIBRATE_HELP = `splitpoint bench --calibrate --endpoint URL [--out FILE] [--base NAME]

  Times a few requests of chosen sizes (prefill of ~512 to ~32K fresh tokens,
  decode at a short and a long KV) and fits the planner's performance profile
  to them. Uses vLLM's /metrics histograms when the server exports them, else
  the client's clock. Writes the profile JSON to FILE (validated), and always
  stores it as this endpoint's learned profile. --base names the profile whose
  scheduler limits (max-num-seqs, max-num-batched-tokens) are kept (default h100-7b).`;

export async function calibrateCommand(values: Record<string, string | boolean | undefined>, io: CliIO): Promise<number> {
  const endpoint = await connect(values, io);
  const baseName = typeof values.base === 'string' ? values.base : undefined;
  const base = baseName ? namedProfile(baseName) : H100_7B;
  if (!base) throw new UsageError(`--base ${baseName}: unknown profile`);
  const result = await calibrate({
    client: endpoint.client,
    contextWindow: endpoint.contextWindow,
    base,
    name: `calibrated ${endpoint.client.baseURL}`,
    log: values.json ? undefined : (l) => io.err(`calibrate: ${l}`),
  });
  const json = `${JSON.stringify(result.profile, null, 2)}\n`;
  if (typeof values.out === 'string') writeFileSync(values.out, json);
  saveLearnedProfile(endpoint.client.baseURL, result.profile);
  if (values.json)
    io.out(JSON.stringify({ profile: result.profile, prefill: result.prefill, decode: result.decode, timing: result.timing }));
  else {
    io.out(json.trimEnd());
    const written = typeof values.out === 'string' ? ` and written to ${values.out}` : '';
    io.err(`calibrate: timed by ${result.timing}; stored for ${endpoint.client.baseURL} in ${learnedProfilesPath()}${written}`);
  }
  return 0;
}
