/**
 * Messages between the extension host and the webview. Both sides import
 * this file. Each webview message type needs a shape check (./validate.ts)
 * and a handler (src/host/webviewDispatch.ts), both tables keyed by this
 * union, so adding a type is a compile error until both exist; the webview
 * handles HostToWebview with an exhaustive switch.
 *
 * The host owns all session state. On `ready` and whenever the view becomes
 * visible again it sends a full `snapshot`; after that, deltas.
 */

import type {
  BlockSpan,
  LayoutSetting,
  MessageKind,
  ModeSetting,
  Origin,
  PinKind,
  Role,
  StrategyName,
  Verbosity,
} from '../core/vocabulary';
import type { PlanOption } from '../core/compaction/events';
export { splitVolume, summaryRoom, volumeAt, volumeWithPriors } from '../core/perf/volume';
export { formatTokens } from '../core/tokens/formatTokens';

// The shared vocabulary is the core's (src/core/vocabulary.ts); the lists themselves are in ./vocabulary.
export { isSettled } from '../core/vocabulary';
export type { BlockStatus, Layout, MessageKind, Mode, Origin, PinKind, Role, StrategyName, Verbosity } from '../core/vocabulary';

/** One message of the active context, as the timeline and the chat show it. */
export interface ViewMessage {
  id: string;
  /** Position in the active context. */
  index: number;
  role: Role;
  kind: MessageKind;
  origin: Origin;
  /** Calibrated token count. */
  tokens: number;
  /** Full text for user/assistant/summary/pinned; tool output may be cut (see `truncated`). */
  content: string;
  truncated: boolean;
  /** For a cut tool output: the whole output's line count (the content holds its head and tail only). */
  lines?: number;
  reasoning?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** For tool results: the call they answer. */
  toolCallId?: string;
  /** For summaries: how many archived originals it stands for (expandable). */
  archivedCount?: number;
  /** For summaries: the judge's verdict, when async validation ran. */
  verdict?: VerdictView;
}

export interface VerdictView {
  alignment: number;
  nonContradiction: number;
  overall: number;
  accepted: boolean;
  diagnosis: string;
  attempt: number;
}

export interface PinView {
  id: string;
  text: string;
  kind: PinKind;
  source: 'user' | 'agent';
}

export interface GaugeView {
  /** Calibrated tokens of the active context. */
  used: number;
  window: number;
  hi: number;
  lo: number;
  block: number;
}

export interface SplitView {
  strategy: StrategyName;
  /** The strategy's own choice (the handle resets to it). */
  tailStartIndex: number;
  /** Kept-before-tail messages (preserve-user-messages strategy). */
  keptIndices: number[];
  /**
   * Past the last message the strategy's own split summarises: its tail start, except that preserving user messages
   * summarises every agent message, after the first kept user message too.
   */
  headEnd: number;
  /** Tail starts the handle may snap to, ascending. */
  allowed: number[];
  /** Messages before this index (system prompt, pinned block) are never compacted. */
  frameEnd: number;
  /** Which active context the indices refer to: a drag placed on another version is dropped by the view. */
  version: string;
  /** Head tokens per summary token the engine asks for (the verbosity's): with the room left at `lo`, the projected summary. */
  compression: number;
  /**
   * The summary in force when compacting it again would pass the depth cap: the next summary carries it verbatim, so
   * it is not compressed (core/compaction/plan.ts). Null otherwise.
   */
  carriedIndex: number | null;
  blockTokens: number;
}

/**
 * The split after one appended message. `allowed` is sent as a change, not
 * resent whole with every message: the previous list keeps its entries before
 * `allowedFrom` and gains `allowedAppend` (the old "compact everything" end
 * goes; so do the places inside a tool batch, while it awaits its results).
 */
export interface SplitChange extends Omit<SplitView, 'allowed'> {
  allowedFrom: number;
  allowedAppend: number[];
}

/** The split the view should hold after `next` (a whole SplitView, or a change against `prev`). */
export function applySplitChange(prev: SplitView, next: SplitView | SplitChange): SplitView {
  if (!('allowedAppend' in next)) return next;
  const { allowedAppend, allowedFrom, ...rest } = next;
  return { ...rest, allowed: [...prev.allowed.filter((a) => a < allowedFrom), ...allowedAppend] };
}

export { applyBlockProgress, compactionOpen, indicesHold, summarisedBy, summaryTokens } from './blockViews';

/** What a turn that stops for a compaction waits on (agentWaitText says each). */
export type CompactingDetail = 'now' | 'background' | 'verdict' | 'amending';

/**
 * What a running agent waits on while no reply text streams. 'model': the request is sent and no token has come (the
 * server's queue and the prompt's prefill, which can take minutes on a busy server); 'reasoning': the model is
 * thinking; 'tool': a tool runs (`detail`, its name); 'compaction': the turn waits for a compaction (`detail`
 * 'background': the context is full and the background one is not ready; 'now': one that runs before the agent goes on;
 * 'verdict': the judge checks a summary made while the agent was idle against the new message; 'amending': the judge
 * rejected it and it is rewritten).
 */
export interface AgentWaitView {
  on: 'model' | 'reasoning' | 'tool' | 'compaction';
  /** For 'compaction': a CompactingDetail; for 'tool': the tool's name. */
  detail: string | null;
  /** How long it had waited when the message was sent: a duration, since the webview's clock may not be the host's. */
  elapsedMs: number;
}

export interface BlockStatsView {
  inputTokens: number;
  /** Tokens the worker decoded, a reasoning model's thinking included. */
  outputTokens: number;
  /** The summary's own tokens when the worker also thought (thinking removed); null: the summary is all it wrote. */
  summaryTokens: number | null;
  cachedTokens: number | null;
  ms: number;
}

/** The engine's block on the wire: absent values are null. */
export interface BlockView extends BlockSpan {
  summary: string | null;
  error: string | null;
  stats: BlockStatsView | null;
  /**
   * A hand-edited summary's tokens, counted by the host with the session's counter and calibrated like the other
   * counts (the worker's stats describe the text it replaced); absent when not counted.
   */
  editedTokens?: number;
}

/** A running block's output so far, in tokens. */
export interface BlockProgress {
  index: number;
  streamedTokens: number;
}

export type CompactionState = 'running' | 'ready' | 'judging' | 'held' | 'adopted' | 'cancelled' | 'failed';

export interface CompactionView {
  id: string;
  background: boolean;
  focus: string | null;
  state: CompactionState;
  blocks: BlockView[];
  headTokens: number;
  /**
   * The split point Adopt uses (where the verbatim tail starts), in the indices of `version`; absent before it is
   * planned, or once the context no longer holds the message there.
   */
  tailStartIndex?: number;
  /** What the merge adds to the blocks' summaries: its header and part headings (0 before it is planned). */
  headingTokens?: number;
  /** Filled once every block has a summary. */
  totals: {
    summaryTokens: number;
    compressionRatio: number;
    inputTokens: number;
    outputTokens: number;
    /** null: the server did not report cached tokens (unknown, not 0). */
    cachedTokens: number | null;
    wallMs: number;
  } | null;
  checks: {
    missingPins: string[];
    openLoopsBefore: number;
    /** null: not counted (the summary's sections are not named in English). */
    openLoopsAfter: number | null;
    openLoopsDropped: boolean;
    /** The summary is not smaller than the head it replaces. */
    grows?: boolean;
  } | null;
  verdict: VerdictView | null;
  /** Why it is held or failed. */
  note: string | null;
  /** The planner's choice and what it weighed (absent when no planner ran). */
  plan?: CompactionPlanView | null;
  /**
   * The active context its message indices (blocks, loss facts) refer to, as SplitView.version names it. Adopting it,
   * or a first pin, changes the context: the indices then point at other messages (see indicesHold).
   */
  version?: string;
  /** What the summaries would lose, once every block has one (the review editor has the full list). */
  loss?: LossHeadlineView | null;
}

/** The loss report in brief: counts by kind and the first few dropped facts, each tied to its message. */
export interface LossHeadlineView {
  /** "Dropped 7 of 212 facts: 3 identifiers, 2 error lines" (or that nothing was dropped). */
  headline: string;
  dropped: number;
  /** At most a handful, in head order; the review editor lists them all. */
  first: Array<{ kind: string; key: string; text: string; messageId: string; messageIndex: number }>;
}

/** One option the planner considered, with its predicted wall time. */
export type PlanOptionView = Pick<
  PlanOption,
  'label' | 'mode' | 'layout' | 'blockTokens' | 'blocks' | 'concurrency' | 'summaryTokens' | 'predictedMs'
> & {
  /** Why it was ruled out, if it was. */
  excluded?: string;
};

export interface CompactionPlanView {
  chosen: PlanOptionView;
  alternatives: PlanOptionView[];
  /** The performance profile the prediction used (e.g. "h100-7b (calibration)"). */
  profile: string;
  /** Other clients' work the plan counted on ("the server: 12 other requests running, 310K KV tokens"), when any. */
  serverLoad?: string;
  /** Wall time once every block has a summary. */
  measuredMs: number | null;
}

export interface ApprovalView {
  callId: string;
  tool: string;
  summary: string;
  /** Command text, for run_command. */
  command?: string;
  /** For edits and writes: the file and a unified diff. */
  path?: string;
  diff?: string;
}

export interface SessionListItem {
  id: string;
  title: string;
  createdAt: number;
  messageCount: number;
  /** Latest message or event time in the log (ms since the epoch). */
  lastUsedAt?: number;
  /** Size of the session log on disk. */
  bytes?: number;
}

export interface ViewSnapshot {
  session: SessionListItem;
  sessions: SessionListItem[];
  messages: ViewMessage[];
  gauge: GaugeView;
  split: SplitView;
  pins: PinView[];
  focus: string | null;
  compaction: CompactionView | null;
  /** Compactions in force; undo peels the last. */
  compactionDepth: number;
  agent: { running: boolean; streaming: string; approvals: ApprovalView[]; waiting: AgentWaitView | null };
  settings: { endpoint: string; model: string | null; mode: ModeSetting; layout: LayoutSetting; verbosity: Verbosity };
  /** `model`: the id the server names (its first model when none is configured), once probed. */
  connection: { state: 'unknown' | 'ok' | 'error'; message: string | null; model?: string | null };
  trusted: boolean;
}

/** Host → webview. */
export type HostToWebview =
  | { type: 'snapshot'; snapshot: ViewSnapshot }
  | { type: 'message-added'; message: ViewMessage; gauge: GaugeView; split: SplitView | SplitChange }
  | { type: 'assistant-delta'; text: string }
  /** The reply streamed so far is void: the connection dropped and its request is sent again. */
  | { type: 'assistant-reset' }
  | { type: 'agent-state'; running: boolean }
  /** What the running agent now waits on while no reply text streams; null once text streams or the turn ends. */
  | { type: 'agent-waiting'; waiting: AgentWaitView | null }
  | { type: 'compaction'; compaction: CompactionView | null }
  | { type: 'block'; compactionId: string; block: BlockView }
  /**
   * Streaming progress of running blocks: what one turn of the host's event loop brought (the workers' streams are
   * read in batches on one shared clock), one message for all of them; the blocks are 'streaming'.
   */
  | { type: 'block-progress'; compactionId: string; progress: BlockProgress[] }
  | { type: 'approval-requested'; approval: ApprovalView }
  | { type: 'approval-resolved'; callId: string; approved: boolean }
  | { type: 'pins'; pins: PinView[] }
  | { type: 'archived'; summaryId: string; messages: ViewMessage[] }
  | { type: 'notice'; level: 'info' | 'warning' | 'error'; text: string }
  /** The split changed without a new message (e.g. after `set-strategy`): the handle resets to `split.tailStartIndex`. */
  | { type: 'split'; split: SplitView };

/**
 * What crosses to the webview: one message, or the messages one turn of the host's event loop produced, in order
 * (src/host/postBatcher.ts). The page applies a batch's messages one by one, as if they had come apart.
 */
export type HostToWebviewPost = HostToWebview | { type: 'batch'; messages: HostToWebview[] };

/** Webview → host. */
export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'visible' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'compact'; focus: string | null; tailStartIndex: number | null }
  | { type: 'set-strategy'; strategy: StrategyName }
  | { type: 'block-edit'; compactionId: string; block: number; text: string }
  /** `focus`: this block only is redone with it (added to the standing focus). */
  | { type: 'block-regenerate'; compactionId: string; block: number; focus?: string }
  | { type: 'compaction-adopt'; compactionId: string }
  | { type: 'compaction-cancel'; compactionId: string }
  | { type: 'undo' }
  | { type: 'approve'; callId: string }
  | { type: 'reject'; callId: string; reason: string | null }
  | { type: 'pin'; text: string; kind: PinKind; messageId: string | null }
  | { type: 'unpin'; pinId: string }
  | { type: 'edit-pin'; pinId: string; text: string }
  | { type: 'expand-summary'; summaryId: string }
  | { type: 'clear-focus' }
  | { type: 'switch-session'; sessionId: string }
  | { type: 'new-session' }
  /** The side bar's button for the compaction review editor. */
  | { type: 'open-review' };

/** Parses `/compact`, `/compact focus text`, `/compact "focus text"` (quotes optional). */
export function parseSlashCommand(
  input: string,
): { command: 'compact'; focus: string | null } | { command: 'unknown'; name: string } | undefined {
  const t = input.trim();
  if (!t.startsWith('/')) return undefined;
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(t);
  if (!m) return undefined;
  const name = m[1]!.toLowerCase();
  if (name !== 'compact') return { command: 'unknown', name };
  let focus = m[2]!.trim();
  // Typographic quotes (“ ” ‘ ’) written as escapes: test/unit/bundleCharset.test.ts says why.
  const q = /^(["'\u201C\u201D\u2018\u2019])([\s\S]*)(["'\u201C\u201D\u2018\u2019])$/.exec(focus);
  if (q) focus = q[2]!.trim();
  return { command: 'compact', focus: focus.length > 0 ? focus : null };
}

export const SLASH_COMMANDS = [
  {
    name: '/compact',
    hint: '/compact "what must survive"',
    description: 'Compact now; the focus steers what survives and becomes the standing focus.',
  },
] as const;
