import { UsageError } from './args';
import { INSPECT_HELP, inspectCommand } from './inspectCommand';
import type { CliIO } from './io';
import { processIO } from './io';
import { SIM_HELP, simCommand } from './simCommand';
import { COMPACT_HELP, compactCommand } from './compactCommand';
import { BENCH_HELP, benchCommand } from './benchCommand';
import { RUN_HELP, runCommand } from './runCommand';
import { EVAL_HELP, evalCommand } from './evalCommand';

interface Command {
  help: string;
  run(argv: string[], io: CliIO): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  inspect: { help: INSPECT_HELP, run: inspectCommand },
  compact: { help: COMPACT_HELP, run: compactCommand },
  bench: { help: BENCH_HELP, run: benchCommand },
  run: { help: RUN_HELP, run: runCommand },
  eval: { help: EVAL_HELP, run: evalCommand },
  sim: { help: SIM_HELP, run: simCommand },
};

const USAGE = `splitpoint — context compaction you can see and steer, headless

Usage: splitpoint <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(9)} ${c.help.split('\n')[2]?.trim() ?? ''}`)
  .join('\n')}

Run "splitpoint <command> --help" for a command's options.`;

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.err(`splitpoint: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if ((rest.includes('--help') || rest.includes('-h')) && name !== 'sim') {
    io.out(cmd.help);
    return 0;
  }
  try {
    return await cmd.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`splitpoint ${name}: ${err.message}\n\n${cmd.help}`);
      return 2;
    }
    io.err(`splitpoint ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`splitpoint: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
