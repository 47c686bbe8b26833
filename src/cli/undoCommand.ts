import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { isSessionLog } from '../core/session/sessionStore';
import { NodeFileStorage } from '../node/fileStorage';
import { parseCommandArgs, UsageError } from './args';
import type { CliIO } from './io';
import { openSession } from './openSession';

export const UNDO_HELP = `splitpoint undo --session LOG.jsonl [--all] [--json]

  Undoes the newest compaction in force in a session log: the messages it
  summarised are sent to the model again, and an earlier compaction under it
  is in force again. Nothing is deleted: the log gains an undo event, and the
  compaction stays in it. Run again to peel the next layer.

  --session LOG.jsonl   the session log (the extension's, or one compact --adopt wrote)
  --all                 undo every compaction in force, newest first
  --json                print one JSON object`;

const OPTIONS = {
  session: { type: 'string' },
  all: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

export async function undoCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const path = values.session;
  if (typeof path !== 'string') throw new UsageError('name the session log: --session LOG.jsonl');
  const text = await new NodeFileStorage().read(path);
  if (text !== undefined && !isSessionLog(text))
    throw new Error(
      `${path} is not a Splitpoint session log, so it has no compaction to undo (a messages array is never compacted in place).`,
    );
  const { store } = await openSession(path, { holder: 'splitpoint undo' });
  try {
    const ledger = new TokenLedger(await loadTiktokenCounter());
    const tokens = () => ledger.total(store.active().messages);
    if (store.snapshot.compactions.length === 0) throw new Error(`${path} has no compaction in force: there is nothing to undo.`);
    const before = tokens();
    const undone: string[] = [];
    do undone.push((await store.undoCompaction()).id);
    while (values.all && store.snapshot.compactions.length > 0);
    const after = tokens();
    const left = store.snapshot.compactions.length;
    if (values.json) io.out(JSON.stringify({ log: path, undone, tokensBefore: before, tokensAfter: after, compactionsInForce: left }));
    else {
      const n = (x: number) => x.toLocaleString('en-US');
      const what = undone.length === 1 ? `compaction ${undone[0]}` : `${undone.length} compactions (${undone.join(', ')})`;
      io.out(`Undid ${what}: the context is ${n(before)} → ${n(after)} tokens (local estimate).`);
      io.out(
        left === 0
          ? 'No compaction is in force now.'
          : `${left} compaction${left === 1 ? '' : 's'} still in force; run again to undo the next.`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}
