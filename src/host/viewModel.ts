import type { BlockStats, BlockView as CoreBlockView, CompactionTotals } from '../core/compaction/events';
import type { SurvivalReport } from '../core/compaction/checks';
import type { Verdict } from '../core/agent/judge';
import type { StoredMessage } from '../core/messages';
import type { PinItem } from '../core/session/schema';
import type { ActiveOrigin } from '../core/session/sessionState';
import type { StrategyName } from '../core/splitPoint';
import { planSplit } from '../core/splitPoint';
import { isSummaryMessage } from '../core/messages';
import { carriedSummary, DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import { countLines } from '../core/pretrim';
import type { TokenLedger } from '../core/tokens/tokenLedger';
import type { BudgetThresholds } from '../core/triggers';
import type { Verbosity } from '../core/compaction/prompts';
import { COMPRESSION } from '../core/perf/volume';
import type {
  BlockStatsView,
  BlockView,
  CompactionView,
  GaugeView,
  PinView,
  SplitView,
  VerdictView,
  ViewMessage,
} from '../protocol/messages';

/**
 * Pure conversions from engine state to the protocol's view shapes. No
 * 'vscode' here: the unit tests build snapshots from a real SessionStore in
 * memory and check what the webview would receive.
 */

/** Tool output shown in the chat is cut to this; the model still sees its (capped) full text. */
export const VIEW_TOOL_OUTPUT_CHARS = 6000;

export function cutForView(text: string, max = VIEW_TOOL_OUTPUT_CHARS): { content: string; truncated: boolean } {
  if (text.length <= max) return { content: text, truncated: false };
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return {
    content: `${text.slice(0, head)}\n… [${text.length - max} characters not shown] …\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

/**
 * The view's copy of a message. `whole`: not cut, for the loss report, which judges the whole text (a compaction
 * replaces all of it); the chat's copies are cut.
 */
export function toViewMessage(
  m: StoredMessage,
  index: number,
  origin: ActiveOrigin,
  ledger: TokenLedger,
  o: { whole?: boolean } = {},
): ViewMessage {
  const cut = m.role === 'tool' && !o.whole ? cutForView(m.content) : { content: m.content ?? '', truncated: false };
  const v: ViewMessage = {
    id: m.id,
    index,
    role: m.role,
    kind: m.kind,
    origin,
    tokens: ledger.calibrated(ledger.count(m)),
    content: cut.content,
    truncated: cut.truncated,
  };
  if (m.role === 'assistant') {
    if (m.reasoning) v.reasoning = m.reasoning;
    if (m.tool_calls && m.tool_calls.length > 0)
      v.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  }
  if (m.role === 'tool') v.toolCallId = m.tool_call_id;
  if (cut.truncated) v.lines = linesOf(m);
  return v;
}

/** Lines of a stored message's text, counted once: messages do not change, and a cut one's count is sent with every snapshot. */
const lineCounts = new WeakMap<StoredMessage, number>();
function linesOf(m: StoredMessage): number {
  let n = lineCounts.get(m);
  if (n === undefined) lineCounts.set(m, (n = countLines(m.content ?? '')));
  return n;
}

export function gaugeView(used: number, window: number, t: BudgetThresholds): GaugeView {
  return { used, window, hi: t.hi, lo: t.lo, block: t.block };
}

/**
 * Where the strategy would split now, and where the handle may go. Manual
 * splits snap to message boundaries that orphan no tool result (the engine's
 * splitManual 'message' mode), so `allowed` is exactly that set.
 */
export function splitView(
  messages: readonly StoredMessage[],
  ledger: Pick<TokenLedger, 'countAll'>,
  o: {
    strategy: StrategyName;
    window: number;
    replyReserve: number;
    blockTokens: number;
    verbosity: Verbosity;
    /** Names the active context the indices refer to (see planBase.viewVersion). */
    version: (frameEnd: number) => string;
    /** The depth of the compaction in force (0: none). */
    priorDepth?: number;
    /** `lo` as a fraction of the window: whether the summary in force is carried at the depth cap depends on its room. */
    lo: number;
  },
): SplitView {
  const tokens = ledger.countAll(messages);
  const { split: r, allowed, frameEnd } = planSplit({ messages, tokens }, { strategy: o.strategy }, o.window, o.replyReserve);
  const summaryAt = messages.findIndex(isSummaryMessage);
  return {
    strategy: o.strategy,
    tailStartIndex: r.tailStartIndex,
    keptIndices: r.keptIndices,
    headEnd: (r.headIndices.at(-1) ?? frameEnd - 1) + 1,
    allowed,
    frameEnd,
    version: o.version(frameEnd),
    compression: COMPRESSION[o.verbosity],
    carriedIndex:
      carriedSummary({
        tokens,
        headIndices: r.headIndices,
        summaryIndex: r.headIndices.includes(summaryAt) ? summaryAt : undefined,
        priorDepth: o.priorDepth ?? 0,
        maxDepth: DEFAULT_COMPACTION_SETTINGS.maxDepth,
        lo: o.lo,
        window: o.window,
      }) ?? null,
    blockTokens: o.blockTokens,
  };
}

export function pinView(p: PinItem): PinView {
  return { id: p.id, text: p.text, kind: p.kind, source: p.source };
}

export function verdictView(v: Verdict, attempt: number): VerdictView | null {
  if (v.kind !== 'scored') return null;
  return {
    alignment: v.alignment,
    nonContradiction: v.nonContradiction,
    overall: v.overall,
    accepted: v.accepted,
    diagnosis: v.diagnosis,
    attempt,
  };
}

export function blockView(b: CoreBlockView): BlockView {
  return {
    index: b.index,
    firstMessage: b.firstMessage,
    lastMessage: b.lastMessage,
    tokens: b.tokens,
    status: b.status,
    streamedTokens: b.streamedTokens,
    ...(b.kept ? { kept: [...b.kept] } : {}),
    summary: b.summary ?? null,
    error: b.error ?? null,
    stats: b.stats ? statsView(b.stats) : null,
  };
}

export function statsView(st: BlockStats): BlockStatsView {
  return {
    inputTokens: st.inputTokens,
    outputTokens: st.outputTokens,
    summaryTokens: st.summaryTokens ?? null,
    cachedTokens: st.cachedTokens ?? null,
    ms: st.ms,
  };
}

export function totalsView(t: CompactionTotals): NonNullable<CompactionView['totals']> {
  return {
    summaryTokens: t.summaryTokens,
    compressionRatio: Math.round(t.compressionRatio * 100) / 100,
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    cachedTokens: t.cachedTokens ?? null,
    wallMs: t.wallMs,
  };
}

/** Missing pins are reported by their text (what the user recognises), not their ids. */
export function checksView(c: SurvivalReport, pins: readonly PinItem[]): NonNullable<CompactionView['checks']> {
  const byId = new Map(pins.map((p) => [p.id, p.text]));
  return {
    missingPins: c.missingPins.map((id) => byId.get(id) ?? id),
    openLoopsBefore: c.openLoopsBefore,
    openLoopsAfter: c.openLoopsAfter,
    openLoopsDropped: c.openLoopsDropped,
    grows: c.grows,
  };
}

/** "18,658 → 4,180 tokens, accepted by the judge.": counts as the adoption's toast writes them. */
export function adoptedNote(e: { tokensBefore: number; tokensAfter: number; judged?: boolean }): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${n(e.tokensBefore)} → ${n(e.tokensAfter)} tokens${e.judged ? ', accepted by the judge' : ''}.`;
}
