/**
 * Messages between the host and the compaction review editor (a WebviewPanel
 * in the editor area). Like messages.ts, both sides switch exhaustively over
 * these unions, so a new message type is a compile error until it is handled.
 *
 * The review editor is a second view of the same host state as the side bar:
 * the host sends it a full `review-state` when it opens or the session
 * changes, then per-block deltas while workers stream.
 */
import type { BlockProgress, BlockView, CompactionView, GaugeView, SplitView, ViewMessage } from './messages';

export { excerptAround } from '../core/fidelity/excerpt';

export type FactKindView = 'identifier' | 'path' | 'number' | 'error' | 'test' | 'decision' | 'constraint' | 'instruction' | 'pin';

/** A fact of the head that no summary carries. */
export interface LossFactView {
  id: string;
  kind: FactKindView;
  /** The exact token to look for (and highlight) in the original. */
  key: string;
  /** The whole fact as extracted (a line, a statement). */
  text: string;
  messageId: string;
  /** Index of that message in the active context. */
  messageIndex: number;
  /** The block whose summary should have carried it. */
  block: number;
}

export interface LossReportView {
  compactionId: string;
  /** Facts found in the head. */
  total: number;
  /** Every dropped fact, counted by kind. */
  droppedByKind: Partial<Record<FactKindView, number>>;
  /** The dropped facts themselves, at most LISTED_PER_MESSAGE of any one message (see lossReportView). */
  dropped: LossFactView[];
  /** `fidelity`: the core's fact extractor; `identifiers`: identifiers and paths only (fallback). */
  source: 'fidelity' | 'identifiers';
}

/**
 * Facts listed per message. The report judges whole texts, and one imported tool output of 10 MB can hold 25,000
 * facts: listed whole, the report went to the review editor as 8 MB with every block's summary. Counted, all are.
 */
export const LISTED_PER_MESSAGE = 100;

/** A report of `dropped` (in order): all counted by kind, at most LISTED_PER_MESSAGE listed per message. */
export function lossReportView(
  compactionId: string,
  total: number,
  dropped: readonly LossFactView[],
  source: LossReportView['source'],
): LossReportView {
  const droppedByKind: Partial<Record<FactKindView, number>> = {};
  const perMessage = new Map<string, number>();
  const listed: LossFactView[] = [];
  for (const f of dropped) {
    droppedByKind[f.kind] = (droppedByKind[f.kind] ?? 0) + 1;
    const n = perMessage.get(f.messageId) ?? 0;
    perMessage.set(f.messageId, n + 1);
    if (n < LISTED_PER_MESSAGE) listed.push(f);
  }
  return { compactionId, total, droppedByKind, dropped: listed, source };
}

/** How many facts were dropped, listed or not. */
export function droppedCount(r: Pick<LossReportView, 'droppedByKind'>): number {
  return Object.values(r.droppedByKind).reduce((a, n) => a + (n ?? 0), 0);
}

export interface PlanCandidateView {
  label: string;
  /** null: ruled out before it could be simulated. */
  predictedMs: number | null;
  chosen: boolean;
}

/** What the planner chose and why; `measuredMs` once the compaction finished. */
export interface PlanView {
  compactionId: string;
  mode: string;
  layout: string;
  blockTokens: number | null;
  concurrency: number | null;
  predictedMs: number | null;
  measuredMs: number | null;
  candidates: PlanCandidateView[];
}

export interface ReviewState {
  sessionId: string;
  sessionTitle: string;
  messages: ViewMessage[];
  gauge: GaugeView;
  split: SplitView;
  compaction: CompactionView | null;
  loss: LossReportView | null;
  plan: PlanView | null;
  focus: string | null;
}

/** Host → review editor. */
export type HostToReview =
  | { type: 'review-state'; state: ReviewState }
  | { type: 'review-block'; compactionId: string; block: BlockView; loss: LossReportView | null }
  /** Streaming progress only: no summary changed, so the loss report stands and is not resent. */
  | { type: 'review-progress'; compactionId: string; progress: BlockProgress[] }
  | { type: 'review-notice'; level: 'info' | 'warning' | 'error'; text: string };

/** Review editor → host. */
export type ReviewToHost =
  | { type: 'review-ready' }
  /** Start a compaction from the editor (none is open). */
  | { type: 'review-compact'; focus: string | null }
  | { type: 'review-edit'; compactionId: string; block: number; text: string }
  | { type: 'review-regenerate'; compactionId: string; block: number; focus: string | null }
  | { type: 'review-adopt'; compactionId: string }
  | { type: 'review-cancel'; compactionId: string }
  /** "Keep this": pin the fact's text, so compaction carries it verbatim. */
  | { type: 'review-pin'; text: string; messageId: string };

const TYPES: ReadonlySet<string> = new Set<ReviewToHost['type']>([
  'review-ready',
  'review-compact',
  'review-edit',
  'review-regenerate',
  'review-adopt',
  'review-cancel',
  'review-pin',
]);

/** The page is untrusted input: check the shape before the host acts on it. */
export function isReviewToHost(x: unknown): x is ReviewToHost {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  if (typeof m.type !== 'string' || !TYPES.has(m.type)) return false;
  const str = (k: string) => typeof m[k] === 'string';
  const int = (k: string) => typeof m[k] === 'number' && Number.isInteger(m[k]) && (m[k] as number) >= 0;
  const strOrNull = (k: string) => m[k] === null || typeof m[k] === 'string';
  switch (m.type as ReviewToHost['type']) {
    case 'review-ready':
      return true;
    case 'review-compact':
      return strOrNull('focus');
    case 'review-edit':
      return str('compactionId') && int('block') && str('text');
    case 'review-regenerate':
      return str('compactionId') && int('block') && strOrNull('focus');
    case 'review-adopt':
    case 'review-cancel':
      return str('compactionId');
    case 'review-pin':
      return str('text') && str('messageId');
  }
}

/** Text a dropped block carries instead of a summary (the originals stay archived and recallable). */
export function droppedBlockText(first: number, last: number): string {
  return `(Messages ${first}–${last} were dropped from the summary by the user; the originals stay archived and the recall tool can find them.)`;
}

// Escaped here, not with the fidelity module's helper: that module's patterns would come into the webview bundles.
const DROPPED_RE = new RegExp(
  `^${droppedBlockText(0, 0)
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace('0–0', '\\d+–\\d+')}$`,
);

/** Whether a block's summary is the drop placeholder, whatever its numbers: a first pin renumbers the messages after it. */
export function isDroppedBlockText(text: string | null): boolean {
  return text !== null && DROPPED_RE.test(text);
}

/** Per-kind counts, in a stable order, for "dropped 7 of 212 facts: 3 identifiers, 2 error lines". */
export function lossHeadline(r: LossReportView): string {
  const dropped = droppedCount(r);
  if (dropped === 0)
    return r.total === 1
      ? 'No fact dropped: the one fact of the head appears in the summaries.'
      : `No fact dropped: all ${r.total} facts of the head appear in the summaries.`;
  const counts = Object.entries(r.droppedByKind) as [FactKindView, number][];
  const parts = counts.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, n]) => `${n} ${kindLabel(k, n)}`);
  return `Dropped ${dropped} of ${r.total} facts: ${parts.join(', ')}`;
}

const LABELS: Record<FactKindView, [string, string]> = {
  identifier: ['identifier', 'identifiers'],
  path: ['path', 'paths'],
  number: ['number', 'numbers'],
  error: ['error line', 'error lines'],
  test: ['test', 'tests'],
  decision: ['decision', 'decisions'],
  constraint: ['constraint', 'constraints'],
  instruction: ['instruction', 'instructions'],
  pin: ['pin', 'pins'],
};

export function kindLabel(k: FactKindView, n: number): string {
  return LABELS[k][n === 1 ? 0 : 1];
}
