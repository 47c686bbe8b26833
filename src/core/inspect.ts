import type { StoredMessage } from './messages';
import { defaultStrategyOptions, splitPreserveUserMessages, splitRecentTurns, splitTokenFraction } from './splitPoint';
import type { RecentTurnsResult, SplitResult } from './splitPoint';
import { splitIntoTurns } from './turns';
import type { TokenLedger } from './tokens/tokenLedger';

export interface InspectOptions {
  contextWindow: number;
  /** Tokens reserved for the model's reply; usable context is the window minus this. */
  replyReserve: number;
}

export interface InspectReport {
  totalTokens: number;
  contextWindow: number;
  messages: { index: number; id: string; role: string; kind: string; tokens: number; turn: number | null }[];
  turns: { index: number; start: number; end: number; tokens: number }[];
  strategies: {
    'user-messages': SplitResult & { keptTokens: number; headTokens: number };
    'token-fraction': SplitResult & { keptTokens: number; headTokens: number };
    'recent-turns': RecentTurnsResult & { keptTokens: number; headTokens: number };
  };
}

/** What compaction would keep under each strategy, without calling a model. */
export function inspectSession(messages: readonly StoredMessage[], ledger: TokenLedger, opts: InspectOptions): InspectReport {
  const tokens = ledger.countAll(messages);
  const total = tokens.reduce((a, b) => a + b, 0);
  const turns = splitIntoTurns(messages);
  const turnOf = new Array<number | null>(messages.length).fill(null);
  const turnRows = turns.map((t, k) => {
    let sum = 0;
    for (let i = t.start; i < t.end; i++) {
      turnOf[i] = k;
      sum += tokens[i]!;
    }
    return { index: k, start: t.start, end: t.end, tokens: sum };
  });
  const input = { messages, tokens };
  const withTotals = <T extends SplitResult>(r: T): T & { keptTokens: number; headTokens: number } => {
    const headTokens = r.headIndices.reduce((s, i) => s + tokens[i]!, 0);
    return { ...r, headTokens, keptTokens: total - headTokens };
  };
  const options = defaultStrategyOptions(opts.contextWindow, opts.replyReserve);
  return {
    totalTokens: total,
    contextWindow: opts.contextWindow,
    messages: messages.map((m, i) => ({ index: i, id: m.id, role: m.role, kind: m.kind, tokens: tokens[i]!, turn: turnOf[i]! })),
    turns: turnRows,
    strategies: {
      'user-messages': withTotals(splitPreserveUserMessages(input, options.userMessages)),
      'token-fraction': withTotals(splitTokenFraction(input, options.tokenFraction)),
      'recent-turns': withTotals(splitRecentTurns(input, options.recentTurns)),
    },
  };
}
