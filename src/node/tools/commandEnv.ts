/**
 * The environment a command runs with: only the variables named in the
 * pass-through list (setting `splitpoint.tools.commandEnv`, CLI
 * `--command-env`), never the whole of the editor's or the CLI's own, which
 * holds the API key (SPLITPOINT_API_KEY, OPENAI_API_KEY) and whatever tokens
 * the user's shell exported. Output of a command goes to the model and into
 * the session log, so anything a command can print must be safe to share.
 */
export { DEFAULT_COMMAND_ENV } from '../../core/config/commandEnvDefaults';

/** Names that look like credentials: dropped unless the user listed that exact name. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH/i;

/**
 * Builds the command's environment from `from` (default process.env). Entries
 * ending in `*` pass every variable with that prefix, except credential-like
 * names, which pass only when named exactly.
 */
export function commandEnvironment(passThrough: readonly string[], from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const exact = new Set(passThrough.filter((p) => !p.endsWith('*')));
  const prefixes = passThrough.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined) continue;
    if (exact.has(name) || (!SECRET_NAME.test(name) && prefixes.some((p) => name.startsWith(p)))) env[name] = value;
  }
  // Plain, uncoloured output reads better in a transcript.
  return { ...env, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' };
}
