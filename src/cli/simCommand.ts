import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIO } from './io';

export const SIM_HELP = `splitpoint sim [--port N] [options]

  Runs the vLLM-compatible simulator (for demos and tests; not a model): a
  vLLM-v1-style step scheduler whose step times follow a performance profile
  (--profile h100-7b, the default; --profile unit; --profile-file PATH),
  paced by --time-scale, optionally as --replicas N servers on consecutive
  ports. It lives in dist/sim.js, next to this command, and is not shipped in
  the VSIX. "splitpoint sim --help" inside a build lists its options.`;

interface SimModule {
  runSimCli(argv: string[], io: CliIO): Promise<{ close(): Promise<void> } | undefined>;
  SIM_USAGE: string;
}

/**
 * The simulator is a separate bundle so the extension package never contains
 * it; this command loads it at run time from beside the CLI and serves until
 * interrupted.
 */
export async function simCommand(argv: string[], io: CliIO): Promise<number> {
  const bundled = join(__dirname, 'sim.js');
  if (!existsSync(bundled)) {
    io.err(`The simulator is not installed here (${bundled} is missing). Build it with "npm run build" in a source checkout.`);
    return 1;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sim = require(bundled) as SimModule;
  const handle = await sim.runSimCli(argv, io);
  if (!handle) return 0;
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void handle.close().then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}
