import { inspectSession } from '../core/inspect';
import type { InspectReport } from '../core/inspect';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { openSession } from './openSession';
import { intOption, parseCommandArgs, requireString } from './args';
import type { CliIO } from './io';

export const INSPECT_HELP = `splitpoint inspect --session FILE [--json] [--window N] [--reserve N]

  Per-message tokens, turns, and where each split-point strategy would start
  the verbatim tail. FILE is a Splitpoint session log (.jsonl) or a plain
  OpenAI messages array (.json).

  --window N    context window in tokens for the recent-turns budget (default 32768)
  --reserve N   tokens reserved for the reply (default 4096)
  --json        print one JSON object`;

export async function inspectCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    session: { type: 'string' },
    json: { type: 'boolean', default: false },
    window: { type: 'string' },
    reserve: { type: 'string' },
  });
  const path = requireString(values.session, '--session');
  const contextWindow = intOption(values.window, '--window', 32_768);
  const replyReserve = intOption(values.reserve, '--reserve', 4_096, 0);
  // inspect only reads: a damaged log is reported, never backed up or repaired here.
  const { store } = await openSession(path, { readOnly: true });
  for (const r of store.repairs) io.err(`note: ${r} (in memory only; the file was not changed)`);
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const report = inspectSession(store.active().messages, ledger, { contextWindow, replyReserve });
  io.out(values.json ? JSON.stringify(toJson(report)) : formatText(path, report));
  return 0;
}

function toJson(r: InspectReport): unknown {
  const s = r.strategies;
  return {
    totalTokens: r.totalTokens,
    contextWindow: r.contextWindow,
    messages: r.messages,
    turns: r.turns,
    strategies: {
      'user-messages': pick(s['user-messages'], { keptIndices: s['user-messages'].keptIndices }),
      'token-fraction': pick(s['token-fraction'], {}),
      'recent-turns': pick(s['recent-turns'], {
        turnBudget: s['recent-turns'].turnBudget,
        overBudgetTurnStarts: s['recent-turns'].overBudgetTurnStarts,
      }),
    },
  };
}

function pick(x: InspectReport['strategies']['token-fraction'], extra: Record<string, unknown>): Record<string, unknown> {
  return {
    tailStartIndex: x.tailStartIndex,
    headMessages: x.headIndices.length,
    headTokens: x.headTokens,
    keptTokens: x.keptTokens,
    note: x.note,
    ...extra,
  };
}

function formatText(path: string, r: InspectReport): string {
  const lines: string[] = [];
  lines.push(`${path}: ${r.messages.length} messages, ${r.turns.length} turns, ${r.totalTokens} tokens (local estimate)`);
  lines.push('');
  lines.push('  idx  role       kind     tokens  turn');
  for (const m of r.messages) {
    lines.push(
      `${String(m.index).padStart(5)}  ${m.role.padEnd(9)}  ${m.kind.padEnd(7)}  ${String(m.tokens).padStart(6)}  ${m.turn ?? '-'}`,
    );
  }
  lines.push('');
  lines.push('Split point by strategy (tail start = first message kept verbatim):');
  for (const [name, s] of Object.entries(r.strategies)) {
    lines.push(
      `  ${name.padEnd(15)} tail starts at ${String(s.tailStartIndex).padStart(5)}  ` +
        `summarises ${s.headIndices.length} messages / ${s.headTokens} tokens, keeps ${s.keptTokens}  (${s.note})`,
    );
  }
  return lines.join('\n');
}
