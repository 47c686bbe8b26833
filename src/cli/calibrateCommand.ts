import { writeFileSync } from 'node:fs';
import { H100_7B, namedProfile } from '../core/perf/profile';
import { UsageError } from './args';
import { calibrate } from './calibrate';
import { connect } from './endpoint';
import type { CliIO } from './io';
import { learnedProfilesPath, saveLearnedProfile } from './profileStore';

export const CALIBRATE_HELP = `splitpoint bench --calibrate --endpoint URL [--out FILE] [--base NAME]

  Times a few requests of fresh text (prefill of ~512 to ~32K tokens, as the
  window allows: the largest prompt leaves room for a decode's output) and
  decode at three or four KV sizes, and fits the planner's performance profile
  to them. Uses vLLM's /metrics histograms when the server exports them, else
  the client's clock (decode then asks for up to 1024 tokens a reply, with vLLM's
  ignore_eos and min_tokens). Says which sizes it used and warns when a fit is
  doubtful. Writes the profile JSON to FILE (validated), and always stores it
  as this endpoint's learned profile. --base names the profile whose scheduler
  limits (max-num-seqs, max-num-batched-tokens) are kept (default h100-7b).`;

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
  // On stderr whatever the output format: a doubtful fit must not pass unseen into a stored profile.
  for (const w of result.warnings) io.err(`calibrate: warning: ${w}`);
  const { prefill, decode, timing, plan, warnings } = result;
  if (values.json) io.out(JSON.stringify({ profile: result.profile, prefill, decode, timing, plan, warnings }));
  else {
    io.out(json.trimEnd());
    io.err(
      `calibrate: prompts of ${plan.prefillTokens.join(', ')} tokens (window ${plan.contextWindow}); decode at ` +
        `${plan.decodeKvTokens.join(', ')} KV tokens, ${plan.decodeOutputTokens} output tokens asked of each`,
    );
    const written = typeof values.out === 'string' ? ` and written to ${values.out}` : '';
    io.err(`calibrate: timed by ${timing}; stored for ${endpoint.client.baseURL} in ${learnedProfilesPath()}${written}`);
  }
  return 0;
}
