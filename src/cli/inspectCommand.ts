import { inspectSession } from '../core/inspect';
import type { InspectReport } from '../core/inspect';
import type { SessionStore } from '../core/session/sessionStore';
import { cappedReplyReserve } from '../core/triggers';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { openSession } from './openSession';
import { intOption, parseCommandArgs, requireString } from './args';
import { CLI_REPLY_RESERVE } from './cliDefaults';
import type { CliIO } from './io';

export const INSPECT_HELP = `splitpoint inspect --session FILE [--json] [--window N] [--reserve N] [--summary]

  Per-message tokens, turns, and where each split-point strategy would start
  the verbatim tail. FILE is a Splitpoint session log (.jsonl) or a plain
  OpenAI messages array (.json).

  --window N    context window in tokens for the strategies' budgets (default 32768; compact and run
                use the server's: pass the same N to see the split they would take)
  --reserve N   tokens reserved for the reply (default 4096), at most half the window, as compact and run reserve
  --summary     print the text of the summary in force, which compaction it came from, its depth
                and the log messages it replaces (with --json: a "summary" field, null when none)
  --json        print one JSON object`;

export async function inspectCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    session: { type: 'string' },
    json: { type: 'boolean', default: false },
    window: { type: 'string' },
    reserve: { type: 'string' },
    summary: { type: 'boolean', default: false },
  });
  const path = requireString(values.session, '--session');
  const contextWindow = intOption(values.window, '--window', 32_768);
  // The reserve compact and run split with (cliDefaults), so the split points shown are theirs at this window.
  const replyReserve = cappedReplyReserve(intOption(values.reserve, '--reserve', CLI_REPLY_RESERVE, 0), contextWindow);
  // inspect only reads: a damaged log is reported, never backed up or repaired here.
  const { store } = await openSession(path, { readOnly: true });
  for (const r of store.repairs) io.err(`note: ${r} (in memory only; the file was not changed)`);
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const report = inspectSession(store.active().messages, ledger, { contextWindow, replyReserve });
  const summary = summaryInForce(store, report);
  if (values.json) io.out(JSON.stringify({ ...(toJson(report) as object), ...(values.summary ? { summary: summary ?? null } : {}) }));
  else io.out([formatText(path, report), ...(values.summary ? [summaryText(summary)] : summary ? [hint(summary)] : [])].join('\n\n'));
  return 0;
}

/** The summary the context is sent with, and what it stands for; undefined when no compaction is in force. */
interface SummaryInForce {
  /** Its position in the context (the table's idx). */
  index: number;
  id: string;
  tokens: number;
  compactionId: string;
  /** 1 for a summary of originals; n + 1 when it folded in a depth-n summary. */
  depth: number;
  compactionsInForce: number;
  strategy: string;
  focus: string | null;
  adoptedAt: string;
  /** The log's original messages it stands for (with the summaries it folded in, every layer's): positions in the log, ids. */
  replaced: { count: number; logIndices: number[]; ids: string[] };
  text: string;
}

function summaryInForce(store: SessionStore, report: InspectReport): SummaryInForce | undefined {
  const c = store.active().compaction;
  if (!c) return undefined;
  const index = report.messages.findIndex((m) => m.id === c.summary.id);
  const replaced = new Set(store.summarised().map((m) => m.id));
  const logIndices: number[] = [];
  store.snapshot.messages.forEach((m, i) => {
    if (replaced.has(m.id)) logIndices.push(i);
  });
  return {
    index,
    id: c.summary.id,
    tokens: report.messages[index]?.tokens ?? 0,
    compactionId: c.id,
    depth: c.depth,
    compactionsInForce: store.snapshot.compactions.length,
    strategy: c.strategy,
    focus: c.focus ?? null,
    adoptedAt: new Date(c.at).toISOString(),
    replaced: { count: logIndices.length, logIndices, ids: logIndices.map((i) => store.snapshot.messages[i]!.id) },
    text: c.summary.content ?? '',
  };
}

/** 3,4,5,9 → "3–5, 9". */
function ranges(xs: readonly number[]): string {
  const out: string[] = [];
  for (let k = 0; k < xs.length;) {
    let j = k;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    out.push(j === k ? `${xs[k]}` : `${xs[k]}–${xs[j]}`);
    k = j + 1;
  }
  return out.join(', ');
}

function summaryText(s: SummaryInForce | undefined): string {
  if (!s) return 'No summary is in force: nothing in this session is compacted (or every compaction was undone).';
  const layers = s.compactionsInForce === 1 ? '1 compaction in force' : `${s.compactionsInForce} compactions in force`;
  return [
    `Summary in force: message ${s.index} above, ${s.tokens} tokens, from compaction ${s.compactionId} ` +
      `(depth ${s.depth}, ${layers}; ${s.strategy}${s.focus ? `, focus: ${s.focus}` : ''}; adopted ${s.adoptedAt}).`,
    `It replaces ${s.replaced.count} message${s.replaced.count === 1 ? '' : 's'} of the log: ${ranges(s.replaced.logIndices) || 'none'} ` +
      '(positions among all the logged messages, not the idx above).',
    '',
    s.text,
  ].join('\n');
}

function hint(s: SummaryInForce): string {
  return `Message ${s.index} is the summary in force (depth ${s.depth}); --summary prints its text and what it replaces.`;
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
      'token-fraction': pick(s['token-fraction'], { keptIndices: s['token-fraction'].keptIndices }),
      'recent-turns': pick(s['recent-turns'], {
        keptIndices: s['recent-turns'].keptIndices,
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
