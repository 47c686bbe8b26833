import { isSessionLog, SessionStore } from '../core/session/sessionStore';
import { NodeFileStorage } from '../node/fileStorage';
import { parseCommandArgs, UsageError } from './args';
import type { CliIO } from './io';

export const IMPORT_HELP = `splitpoint import FILE.json [--out LOG.jsonl] [--title TEXT] [--json]

  Creates a Splitpoint session log from a plain OpenAI messages array
  (system/user/assistant with tool_calls/tool), so sessions from other tools
  can be inspected, compacted with --adopt, and undone. FILE.json is only
  read; the log is a new file and an existing one is never overwritten.

  --out LOG.jsonl   where to write the log (default: FILE.jsonl next to FILE.json)
  --title TEXT      the session's title (default: the file name)
  --json            print one JSON object`;

const OPTIONS = {
  out: { type: 'string' },
  title: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/** FILE.json → FILE.jsonl (any other name gets .jsonl appended). */
export function defaultLogPath(source: string): string {
  return source.replace(/\.json$/i, '') + '.jsonl';
}

/**
 * Imports a messages array into a new session log. Refuses a file that is
 * already a session log, a file that is not JSON, and an existing target.
 * `caller` words that last refusal: `import` can name another --out, while
 * `compact --adopt` has no --out and always imports into FILE.jsonl.
 */
export async function importToLog(
  source: string,
  out: string = defaultLogPath(source),
  title?: string,
  caller: 'import' | 'compact' = 'import',
): Promise<SessionStore> {
  const storage = new NodeFileStorage(caller === 'compact' ? 'splitpoint compact --adopt' : 'splitpoint import');
  const text = await storage.read(source);
  if (text === undefined) throw new Error(`No such file: ${source}`);
  if (isSessionLog(text)) throw new Error(`${source} is already a Splitpoint session log; use it as it is (--session ${source}).`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source} is not valid JSON (${(err as Error).message}); expected an OpenAI messages array.`, { cause: err });
  }
  if (await storage.exists(out))
    throw new Error(
      caller === 'compact'
        ? `${out} already exists (an earlier import of ${source}?); adopt into it with --session ${out}, or import ` +
            `${source} into another log first (splitpoint import ${source} --out NEW.jsonl) and compact that.`
        : `${out} already exists; pass --out NEW.jsonl, or use the existing log with --session ${out}.`,
    );
  const name = title ?? source.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, '');
  return SessionStore.importArray({ storage }, out, raw, name);
}

export async function importCommand(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'name the messages file to import' : 'import takes one file');
  const source = positionals[0]!;
  const out = typeof values.out === 'string' ? values.out : defaultLogPath(source);
  const store = await importToLog(source, out, typeof values.title === 'string' ? values.title : undefined);
  await store.close();
  const messages = store.snapshot.messages.length;
  if (values.json) io.out(JSON.stringify({ log: out, sessionId: store.id, messages }));
  else io.out(`Imported ${messages} messages into ${out}.\nNext: splitpoint inspect --session ${out}`);
  return 0;
}
