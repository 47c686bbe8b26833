import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIO } from './io';

export const SIM_HELP = `splitpoint sim [--port N] [options]

  Runs the vLLM-compatible simulator (for demos and tests; not a model).
  It lives in dist/sim.js, next to this command, and is not shipped in the VSIX.`;

/**
 * The simulator is a separate bundle so the extension package never contains
 * it; this command loads it at run time from beside the CLI.
 */
export async function simCommand(argv: string[], io: CliIO): Promise<number> {
  const bundled = join(__dirname, 'sim.js');
  if (!existsSync(bundled)) {
    io.err(`The simulator is not installed here (${bundled} is missing). Build it with "npm run build" in a source checkout.`);
    return 1;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sim = require(bundled) as { runSimCli(argv: string[], io: CliIO): Promise<number> };
  return sim.runSimCli(argv, io);
}
