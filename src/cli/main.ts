import { UsageError } from './args';
import { INSPECT_HELP, inspectCommand } from './inspectCommand';
import type { CliIO } from './io';
import { processIO } from './io';
import { SIM_HELP, simCommand } from './simCommand';
import { COMPACT_HELP, compactCommand } from './compactCommand';
import { BENCH_HELP, benchCommand } from './benchCommand';
import { RUN_HELP, runCommand } from './runCommand';
import { EVAL_HELP, evalCommand } from './evalCommand';
import { IMPORT_HELP, importCommand } from './importCommand';
import { UNDO_HELP, undoCommand } from './undoCommand';
import { version } from '../../package.json';

interface Command {
  help: string;
  run(argv: string[], io: CliIO): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  inspect: { help: INSPECT_HELP, run: inspectCommand },
  import: { help: IMPORT_HELP, run: importCommand },
  compact: { help: COMPACT_HELP, run: compactCommand },
  undo: { help: UNDO_HELP, run: undoCommand },
  bench: { help: BENCH_HELP, run: benchCommand },
  run: { help: RUN_HELP, run: runCommand },
  eval: { help: EVAL_HELP, run: evalCommand },
  sim: { help: SIM_HELP, run: simCommand },
};

/** The paragraph after a command's usage line: what it does, in whole sentences. */
export function summaryOf(help: string): string {
  const paragraph: string[] = [];
  for (const line of help.split('\n').slice(2)) {
    if (!line.trim()) break;
    paragraph.push(line.trim());
  }
  return paragraph.join(' ');
}

/** Wraps `text` to `width` columns, every line after the first indented by `indent` spaces. */
export function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const room = width - (lines.length === 0 ? 0 : indent);
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const NAME_COLUMN = 12;

/** The overview, wrapped to the terminal (80 columns when it is not one). */
export function usage(columns = process.stdout.columns || 80): string {
  const width = Math.max(40, Math.min(columns, 120)) - 1;
  const commands = Object.entries(COMMANDS).map(([name, c]) => {
    const lead = `  ${name.padEnd(NAME_COLUMN - 3)} `;
    return lead + wrap(summaryOf(c.help), width - lead.length, 0).replace(/\n/g, `\n${' '.repeat(lead.length)}`);
  });
  return `splitpoint ${version} — context compaction you can see and steer, headless

Usage: splitpoint <command> [options]
       splitpoint --version

Commands:
${commands.join('\n')}

Run "splitpoint <command> --help" for a command's options.
New here? Try: splitpoint inspect --session test/fixtures/example-session.json`;
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(version);
    return 0;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    io.err(`splitpoint: unknown command "${name}"\n\n${usage()}`);
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
