/**
 * The words the engine, the settings, the protocol and the UI share, each
 * declared once as a `const` list with its type. Plain data with no imports,
 * so the webview may bundle it (through src/protocol/vocabulary.ts).
 */

export const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type Role = (typeof ROLES)[number];

/** normal: part of the dialogue; summary: produced by compaction; pinned: the rendered pinned block. */
export const MESSAGE_KINDS = ['normal', 'summary', 'pinned'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** Where a message of the active context comes from. */
export const ORIGINS = ['system', 'pinned', 'kept', 'summary', 'tail'] as const;
export type Origin = (typeof ORIGINS)[number];

export const STRATEGY_NAMES = ['user-messages', 'token-fraction', 'recent-turns'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export const BLOCK_STATUSES = ['queued', 'streaming', 'done', 'failed', 'edited'] as const;
export type BlockStatus = (typeof BLOCK_STATUSES)[number];

/** Whether a block's summary is final: written or edited. A block being regenerated keeps its old text until then. */
export function isSettled(b: { status: BlockStatus }): boolean {
  return b.status === 'done' || b.status === 'edited';
}

export const VERBOSITIES = ['concise', 'detailed', 'very detailed'] as const;
export type Verbosity = (typeof VERBOSITIES)[number];

export const LAYOUTS = ['cache-aligned', 'target-block'] as const;
export type Layout = (typeof LAYOUTS)[number];

export const MODES = ['parallel', 'sequential'] as const;
export type Mode = (typeof MODES)[number];

/** What a setting may say: 'auto' leaves the choice to the compaction planner. */
export const MODE_SETTINGS = ['auto', ...MODES] as const;
export type ModeSetting = (typeof MODE_SETTINGS)[number];
export const LAYOUT_SETTINGS = ['auto', ...LAYOUTS] as const;
export type LayoutSetting = (typeof LAYOUT_SETTINGS)[number];

export const PIN_KINDS = ['constraint', 'open-loop', 'note'] as const;
export type PinKind = (typeof PIN_KINDS)[number];

/** Whether `x` is one of `list` (narrows unknown input, e.g. a webview message field). */
export function isOneOf<T extends string>(list: readonly T[], x: unknown): x is T {
  return typeof x === 'string' && (list as readonly string[]).includes(x);
}

/**
 * A block of a compaction's head as any view shows it: where it lies and how
 * far it got. The engine's BlockView and the protocol's add the summary text,
 * error and stats in their own representation (undefined in the engine, null
 * on the wire).
 */
export interface BlockSpan {
  index: number;
  firstMessage: number;
  lastMessage: number;
  /** Tokens of head content in the block (local estimate). */
  tokens: number;
  status: BlockStatus;
  /** Output tokens so far while streaming. */
  streamedTokens: number;
  /** Messages between first and last that the block leaves in context verbatim (kept user messages); absent when none. */
  kept?: number[];
}
