import { isSummaryMessage, type ChatMessage, type StoredMessage } from './messages';
import { keepActiveRequest, keepOpenBatchInTail, openToolBatchStart } from './splitGuards';
import { splitIntoTurns, userMessageIndices } from './turns';

/**
 * The three split-point rules of seeds/split-point-strategies.txt, plus a
 * manual split. Each answers one question: where does the verbatim tail start?
 * Everything older (after the frame: system prompt and pinned block) is the head.
 */
import type { StrategyName } from './vocabulary';

export { STRATEGY_NAMES } from './vocabulary';
export type { StrategyName } from './vocabulary';

export interface SplitInput {
  messages: readonly ChatMessage[];
  /** Token count per message, same length as messages. */
  tokens: readonly number[];
}

export interface SplitResult {
  strategy: StrategyName | 'manual';
  /**
   * Index of the first message kept verbatim as a contiguous tail. Equal to
   * messages.length when nothing is kept as a tail.
   */
  tailStartIndex: number;
  /**
   * Messages before the tail that are kept verbatim anyway. Only the
   * user-messages strategy keeps any: the preserved user messages, oldest first.
   */
  keptIndices: number[];
  /** Indices that compaction summarises, oldest first. */
  headIndices: number[];
  /** How the tail start was found, for display and debugging. */
  note: string;
}

export interface UserMessagesOptions {
  /** Token cap on the preserved user messages (the seed's ~20K). */
  capTokens: number;
  /** Usable context (window less reply reserve): the kept messages take at most half of it, leaving the summary room. */
  usableContextTokens?: number;
}

export interface TokenFractionOptions {
  /** Fraction of all tokens kept verbatim (the seed's p = 0.3). */
  fraction: number;
  /**
   * Usable context (window less reply reserve). A session larger than it (imported, or moved to a smaller window) keeps
   * the fraction of this, not of all its tokens: 30 % of 159K tokens is more than a 32K window holds on its own.
   */
  usableContextTokens?: number;
}

/** What a kept part may take at most: `share` of the usable context, when it is known. */
function withinRoom(tokens: number, usableContextTokens: number | undefined, share: number): number {
  return usableContextTokens === undefined ? tokens : Math.min(tokens, Math.floor(share * usableContextTokens));
}

export interface RecentTurnsOptions {
  /** Complete turns kept verbatim (the seed's N = 2). */
  turns: number;
  /** Usable context: the window minus the tokens reserved for the reply. */
  usableContextTokens: number;
  /** Per-turn budget as a share of usable context (0.25), clamped to [min, max] (2K, 8K). */
  turnBudgetShare: number;
  turnBudgetMin: number;
  turnBudgetMax: number;
}

export { ACTIVE_REQUEST_KEEP_TOKENS, keepOpenBatchInTail, openToolBatchStart } from './splitGuards';

export const DEFAULT_SPLIT_OPTIONS = {
  userMessages: { capTokens: 20_000 } satisfies UserMessagesOptions,
  tokenFraction: { fraction: 0.3 } satisfies TokenFractionOptions,
  recentTurns: { turns: 2, turnBudgetShare: 0.25, turnBudgetMin: 2_000, turnBudgetMax: 8_000 },
} as const;

/**
 * Leading messages that are never compacted: system prompts and the pinned
 * block. (A previous summary is not part of the frame: re-compaction folds it in.)
 */
export function frameEnd(messages: readonly ChatMessage[]): number {
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as ChatMessage & Partial<Pick<StoredMessage, 'kind'>>;
    if (m.role === 'system' || m.kind === 'pinned') i++;
    else break;
  }
  return i;
}

/**
 * The first index a tail may start at: after the frame, and after the summary in force. Re-compaction folds that
 * summary into the head; a tail from before it would name a kept message, or the summary itself, whose place in the
 * log is followed by the originals it summarised, so adopting would bring them back (or be refused as stale).
 */
export function tailFloor(messages: readonly ChatMessage[]): number {
  const start = frameEnd(messages);
  for (let i = messages.length - 1; i >= start; i--) if (isSummaryMessage(messages[i]!)) return i + 1;
  return start;
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}

function contiguous(strategy: SplitResult['strategy'], messages: readonly ChatMessage[], tailStart: number, note: string): SplitResult {
  return keepOpenBatchInTail(messages, {
    strategy,
    tailStartIndex: tailStart,
    keptIndices: [],
    headIndices: range(frameEnd(messages), tailStart),
    note,
  });
}

/**
 * A tail may not open with a tool result: its assistant tool call would be in
 * the head and the server would reject the orphan. Move back to the call.
 */
export function safeBoundaryAtOrBefore(messages: readonly ChatMessage[], index: number): number {
  const floor = tailFloor(messages);
  let i = Math.min(index, messages.length);
  while (i > floor && i < messages.length && messages[i]!.role === 'tool') i--;
  return Math.max(i, floor);
}

/**
 * Strategy 1, preserve user messages: walking newest-first, keep user messages
 * until the cap; every agent item is summarised. The pointer is the first kept
 * user message; the summary goes after the last one.
 */
export function splitPreserveUserMessages(input: SplitInput, opts: UserMessagesOptions = DEFAULT_SPLIT_OPTIONS.userMessages): SplitResult {
  const { messages, tokens } = input;
  const start = frameEnd(messages);
  const users = userMessageIndices(messages).filter((i) => i >= start);
  const kept: number[] = [];
  let used = 0;
  const cap = withinRoom(opts.capTokens, opts.usableContextTokens, 0.5);
  for (let k = users.length - 1; k >= 0; k--) {
    const i = users[k]!;
    if (used + tokens[i]! > cap) break;
    used += tokens[i]!;
    kept.push(i);
  }
  kept.reverse();
  const keptSet = new Set(kept);
  const head = range(start, messages.length).filter((i) => !keptSet.has(i));
  const note =
    users.length === 0
      ? 'no user messages: everything after the frame is summarised'
      : kept.length < users.length
        ? `kept ${kept.length} of ${users.length} user messages (${used} tokens, cap ${cap})`
        : `kept all ${users.length} user messages (${used} tokens)`;
  return keepOpenBatchInTail(messages, {
    strategy: 'user-messages',
    tailStartIndex: kept.length > 0 ? kept[0]! : messages.length,
    keptIndices: kept,
    headIndices: head,
    note,
  });
}

/**
 * Strategy 2, preserve a recent token fraction: walk back from the present
 * until p × total tokens are collected, then snap forward to the next user
 * message so the tail starts on a user turn. When no user message follows
 * (one long agentic turn), the recent fraction is kept from the nearest
 * boundary that does not orphan a tool result, rather than dropping it all.
 */
export function splitTokenFraction(input: SplitInput, opts: TokenFractionOptions = DEFAULT_SPLIT_OPTIONS.tokenFraction): SplitResult {
  const { messages, tokens } = input;
  if (frameEnd(messages) >= messages.length) return contiguous('token-fraction', messages, messages.length, 'nothing to compact');
  const start = tailFloor(messages);
  let total = 0;
  for (let i = 0; i < messages.length; i++) total += tokens[i]!;
  const goal = opts.fraction * withinRoom(total, opts.usableContextTokens, 1);
  let acc = 0;
  let cross = messages.length;
  for (let i = messages.length - 1; i >= start; i--) {
    acc += tokens[i]!;
    cross = i;
    if (acc >= goal) break;
  }
  for (let i = cross; i < messages.length; i++) {
    if (messages[i]!.role === 'user') {
      return contiguous(
        'token-fraction',
        messages,
        i,
        `recent ${Math.round(opts.fraction * 100)}% starts at message ${cross}; snapped to user message ${i}`,
      );
    }
  }
  const safe = safeBoundaryAtOrBefore(messages, cross);
  const split = contiguous(
    'token-fraction',
    messages,
    safe,
    `no user message in the recent ${Math.round(opts.fraction * 100)}%; tail starts at message ${safe}`,
  );
  return keepActiveRequest(messages, tokens, split);
}

export function turnBudget(
  opts: Pick<RecentTurnsOptions, 'usableContextTokens' | 'turnBudgetShare' | 'turnBudgetMin' | 'turnBudgetMax'>,
): number {
  const raw = Math.floor(opts.usableContextTokens * opts.turnBudgetShare);
  return Math.min(opts.turnBudgetMax, Math.max(opts.turnBudgetMin, raw));
}

export interface RecentTurnsResult extends SplitResult {
  /** The per-turn token budget in force. */
  turnBudget: number;
  /** Preserved turns (by index of their user message) larger than the budget; their tool output is capped when spliced. */
  overBudgetTurnStarts: number[];
}

/**
 * Strategy 3, preserve recent turns: the tail starts at the user message that
 * opens the (M − N + 1)th of M turns. Each preserved turn is held to a budget
 * of 25% of usable context clamped to [2K, 8K]; turns over it are reported so
 * their tool output can be capped (pretrim.capTurnToBudget) without moving the pointer.
 */
export function splitRecentTurns(input: SplitInput, opts: RecentTurnsOptions): RecentTurnsResult {
  const { messages, tokens } = input;
  const budget = turnBudget(opts);
  const floor = tailFloor(messages);
  const turns = splitIntoTurns(messages).filter((t) => t.start >= floor);
  if (turns.length === 0 && floor > frameEnd(messages)) {
    // One long agentic turn since the summary in force: keep its recent part, as token-fraction does, rather than
    // summarise the work in hand.
    const recent = splitTokenFraction(input, { ...DEFAULT_SPLIT_OPTIONS.tokenFraction, usableContextTokens: opts.usableContextTokens });
    return {
      ...recent,
      strategy: 'recent-turns',
      note: `no user turn after the summary; ${recent.note}`,
      turnBudget: budget,
      overBudgetTurnStarts: [],
    };
  }
  if (turns.length === 0) {
    const base = contiguous('recent-turns', messages, messages.length, 'no user turns: everything after the frame is summarised');
    return { ...base, turnBudget: budget, overBudgetTurnStarts: [] };
  }
  const firstKept = Math.max(0, turns.length - opts.turns);
  const kept = turns.slice(firstKept);
  const over = kept
    .filter((t) => {
      let sum = 0;
      for (let i = t.start; i < t.end; i++) sum += tokens[i]!;
      return sum > budget;
    })
    .map((t) => t.start);
  const tailStart = kept[0]!.start;
  const note =
    `keeps the last ${kept.length} of ${turns.length} turns from message ${tailStart}; per-turn budget ${budget}` +
    (over.length > 0 ? `; ${over.length} over budget` : '');
  return { ...contiguous('recent-turns', messages, tailStart, note), turnBudget: budget, overBudgetTurnStarts: over };
}

export type SnapTo = 'user' | 'message';

/**
 * A split the user dragged to. Snaps to the nearest boundary the mode allows
 * (user-message starts, which are also turn starts; or any message that does
 * not orphan a tool result). Ties go to the later boundary, which compacts more.
 */
export function splitManual(messages: readonly ChatMessage[], requested: number, snap: SnapTo): SplitResult {
  const start = tailFloor(messages);
  const want = Math.min(Math.max(requested, start), messages.length);
  const allowed = allowedBoundaries(messages, snap);
  let best = messages.length;
  let bestDist = Infinity;
  for (const b of allowed) {
    const d = Math.abs(b - want);
    if (d < bestDist || (d === bestDist && b > best)) {
      best = b;
      bestDist = d;
    }
  }
  return contiguous('manual', messages, best, best === want ? `split at message ${best}` : `requested ${requested}, snapped to ${best}`);
}

/**
 * Every tail start the given snap mode allows, ascending. Always includes
 * messages.length (compact everything) and, for 'message' mode, the tail floor
 * (after the frame and after the summary in force).
 */
export function allowedBoundaries(messages: readonly ChatMessage[], snap: SnapTo): number[] {
  const start = tailFloor(messages);
  const out: number[] = [];
  for (let i = start; i < messages.length; i++) {
    const m = messages[i]!;
    if (snap === 'user' ? m.role === 'user' : m.role !== 'tool') out.push(i);
  }
  out.push(messages.length);
  return out;
}

export interface AllStrategiesOptions {
  userMessages?: UserMessagesOptions;
  tokenFraction?: TokenFractionOptions;
  recentTurns: RecentTurnsOptions;
}

/** The seed's defaults for every strategy, given the window and the reply reserve. */
export function defaultStrategyOptions(contextWindow: number, replyReserve: number): Required<AllStrategiesOptions> {
  const usableContextTokens = Math.max(0, contextWindow - replyReserve);
  return {
    userMessages: { ...DEFAULT_SPLIT_OPTIONS.userMessages, usableContextTokens },
    tokenFraction: { ...DEFAULT_SPLIT_OPTIONS.tokenFraction, usableContextTokens },
    recentTurns: { ...DEFAULT_SPLIT_OPTIONS.recentTurns, usableContextTokens },
  };
}

export function splitWith(name: StrategyName, input: SplitInput, opts: AllStrategiesOptions): SplitResult {
  switch (name) {
    case 'user-messages':
      return splitPreserveUserMessages(input, opts.userMessages);
    case 'token-fraction':
      return splitTokenFraction(input, opts.tokenFraction);
    case 'recent-turns':
      return splitRecentTurns(input, opts.recentTurns);
  }
}

/** A strategy's own split, or the position the user dragged the handle to. */
export type SplitChoice = { strategy: StrategyName } | { manualIndex: number };

export interface SplitPlan {
  split: SplitResult;
  /** Tail starts a manual split may snap to, ascending ('message' mode: no orphaned tool result). */
  allowed: number[];
  /** Messages before this index (system prompt, pinned block) are never compacted. */
  frameEnd: number;
}

/**
 * The one place the split is computed: where the tail starts, what is kept,
 * what may be compacted, and where a manual split may go. The view model, the
 * compaction snapshot and the webview's projection all take it from here.
 */
export function planSplit(input: SplitInput, choice: SplitChoice, contextWindow: number, replyReserve: number): SplitPlan {
  const chosen =
    'manualIndex' in choice
      ? splitManual(input.messages, choice.manualIndex, 'message')
      : splitWith(choice.strategy, input, defaultStrategyOptions(contextWindow, replyReserve));
  // The strategies hold to this themselves; it is applied again here, on the way to every snapshot, so that a strategy
  // added later cannot summarise a call whose results are still to come.
  const split = keepOpenBatchInTail(input.messages, chosen);
  // Nor may the handle go past such a batch: a split there would be taken back to it, and the view show another one.
  const open = openToolBatchStart(input.messages);
  const allowed = allowedBoundaries(input.messages, 'message').filter((a) => open === undefined || a <= open);
  return { split, allowed, frameEnd: frameEnd(input.messages) };
}
