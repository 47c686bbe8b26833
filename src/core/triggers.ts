/**
 * When to compact, as pure functions of measurements and events. The agent
 * loop feeds them and acts on the decisions; nothing here has side effects or
 * reads a clock.
 */

/**
 * Fractions of the prompt's room, the window less the reply reserve: every request asks for the reserve as max_tokens,
 * so a prompt past the room is refused by the server however far it is from the window.
 */
export interface BudgetThresholds {
  /** Start background compaction at this fraction of the room (0.75). */
  hi: number;
  /** Compaction aims to bring usage down to this fraction (0.4). */
  lo: number;
  /** At this fraction the agent must wait for compaction (0.95). */
  block: number;
}

/** The tokens each request reserves for its reply: the setting, but never more than half the window. */
export function cappedReplyReserve(replyReserve: number, window: number): number {
  return Math.min(replyReserve, Math.floor(window / 2));
}

/** The tokens a prompt may use: the window less the tokens reserved for the reply. */
export function promptRoom(window: number, replyReserve: number): number {
  return Math.max(1, window - replyReserve);
}

/** The thresholds as fractions of the whole window, where the gauges draw them. */
export function thresholdsOfWindow(t: BudgetThresholds, window: number, replyReserve: number): BudgetThresholds {
  const k = window > 0 ? promptRoom(window, replyReserve) / window : 1;
  return { hi: t.hi * k, lo: t.lo * k, block: t.block * k };
}

export const DEFAULT_THRESHOLDS: BudgetThresholds = { hi: 0.75, lo: 0.4, block: 0.95 };

export function validateThresholds(t: BudgetThresholds): string[] {
  const errors: string[] = [];
  for (const [k, v] of Object.entries(t)) {
    if (!(typeof v === 'number' && v > 0 && v <= 1)) errors.push(`${k} must be a number in (0, 1], got ${String(v)}`);
  }
  if (errors.length === 0) {
    if (!(t.lo < t.hi)) errors.push(`lo (${t.lo}) must be below hi (${t.hi}), or compaction would thrash`);
    if (!(t.hi < t.block))
      errors.push(`hi (${t.hi}) must be below block (${t.block}), or the agent would stall before background compaction starts`);
  }
  return errors;
}

/**
 * Hysteresis state. The trigger fires on an upward crossing of `hi` and then
 * stays disarmed until usage is back under `hi` with no compaction running.
 * Each firing compacts down to `lo`, so the gap between the two is the room the
 * agent gets before the next compaction; a compaction that could not get under
 * `hi` does not immediately start another one.
 */
export interface BudgetState {
  armed: boolean;
}

export const INITIAL_BUDGET_STATE: BudgetState = { armed: true };

export type BudgetDecision =
  | { kind: 'ok' }
  | { kind: 'start-background'; usedFraction: number; targetTokens: number }
  | { kind: 'wait'; usedFraction: number; targetTokens: number }
  | { kind: 'in-progress'; usedFraction: number };

/** `roomTokens`: the prompt's room (promptRoom), which the thresholds are fractions of; `usedFraction` is of it too. */
export function evaluateBudget(
  usedTokens: number,
  roomTokens: number,
  t: BudgetThresholds,
  state: BudgetState,
  compactionRunning: boolean,
): { decision: BudgetDecision; state: BudgetState } {
  const f = roomTokens > 0 ? usedTokens / roomTokens : 1;
  const targetTokens = Math.floor(t.lo * roomTokens);
  if (f >= t.block) {
    return { decision: { kind: 'wait', usedFraction: f, targetTokens }, state: { armed: false } };
  }
  if (f >= t.hi) {
    if (state.armed && !compactionRunning) {
      return { decision: { kind: 'start-background', usedFraction: f, targetTokens }, state: { armed: false } };
    }
    return { decision: compactionRunning ? { kind: 'in-progress', usedFraction: f } : { kind: 'ok' }, state };
  }
  const next = compactionRunning ? state : { armed: true };
  return { decision: compactionRunning ? { kind: 'in-progress', usedFraction: f } : { kind: 'ok' }, state: next };
}

/** Structural events: things that happened, no measurement. */
export type StructuralEvent =
  { kind: 'user-compact'; focus?: string } | { kind: 'tool-output'; messageId: string; tokens: number } | { kind: 'compaction-finished' };

export type StructuralDecision =
  { kind: 'none' } | { kind: 'compact-now'; focus?: string } | { kind: 'distill-tool-output'; messageId: string };

/** A single tool output this large is distilled eagerly so pressure builds slower. */
export function evaluateStructural(e: StructuralEvent, opts: { distillToolOutputTokens: number }): StructuralDecision {
  switch (e.kind) {
    case 'user-compact':
      return e.focus === undefined ? { kind: 'compact-now' } : { kind: 'compact-now', focus: e.focus };
    case 'tool-output':
      return e.tokens >= opts.distillToolOutputTokens ? { kind: 'distill-tool-output', messageId: e.messageId } : { kind: 'none' };
    case 'compaction-finished':
      return { kind: 'none' };
  }
}

/**
 * Temporal: compact while the user is away, but only when there is something
 * worth compacting and not again for the same idle period.
 */
export interface IdleInput {
  nowMs: number;
  lastActivityMs: number;
  lastIdleCompactionMs: number | undefined;
  usedTokens: number;
  windowTokens: number;
}

export function evaluateIdle(x: IdleInput, opts: { idleMs: number; minFraction: number }): boolean {
  if (x.nowMs - x.lastActivityMs < opts.idleMs) return false;
  if (x.lastIdleCompactionMs !== undefined && x.lastIdleCompactionMs >= x.lastActivityMs) return false;
  return x.windowTokens > 0 && x.usedTokens / x.windowTokens >= opts.minFraction;
}

/** Reactive: the server refused the prompt as too long. Compact synchronously, retry once. */
export type ReactiveDecision =
  { kind: 'compact-and-retry'; window: number; input: number | undefined } | { kind: 'give-up'; reason: string };

export function evaluateOverflow(overflow: { window: number; input: number | undefined }, alreadyRetried: boolean): ReactiveDecision {
  if (alreadyRetried) {
    return {
      kind: 'give-up',
      reason: `the request still exceeds the ${overflow.window}-token window after compaction; lower the split point or shorten the newest messages`,
    };
  }
  return { kind: 'compact-and-retry', window: overflow.window, input: overflow.input };
}
