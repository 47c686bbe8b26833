import type { BlockProgress, BlockView, CompactionView, SplitView } from './messages';

/* What the host and the view both work out from a compaction's blocks: kept here so the two never disagree. */

/** The blocks after a progress message: the ones it names are streaming with their new counts; the array is new. */
export function applyBlockProgress(blocks: readonly BlockView[], progress: readonly BlockProgress[]): BlockView[] {
  const at = new Map(progress.map((p) => [p.index, p.streamedTokens]));
  return blocks.map((b) => {
    const n = at.get(b.index);
    return n === undefined ? b : { ...b, status: 'streaming', streamedTokens: n };
  });
}

/** Whether a compaction's message indices still point at the messages the view shows. */
export function indicesHold(c: Pick<CompactionView, 'version'>, split: Pick<SplitView, 'version'>): boolean {
  return c.version === undefined || c.version === split.version;
}

/** The messages a block summarises: its span without the ones it leaves in context (kept user messages). */
export function summarisedBy(b: Pick<BlockView, 'firstMessage' | 'lastMessage' | 'kept'>): number[] {
  const kept = b.kept && b.kept.length > 0 ? new Set(b.kept) : null;
  const out: number[] = [];
  for (let i = b.firstMessage; i <= b.lastMessage; i++) if (!kept?.has(i)) out.push(i);
  return out;
}

/**
 * Tokens of a block's summary as it stands: the worker's output count, the host's count of a hand-edited text, or
 * ≈ chars/4 where no count exists (an estimate, and said to be one); null while it has none.
 */
export function summaryTokens(
  b: Pick<BlockView, 'status' | 'summary' | 'stats' | 'editedTokens'>,
): { n: number; estimate: boolean } | null {
  if (b.summary === null) return null;
  // The user's text, edited or being regenerated: the host's count of it, once it has one.
  if (b.status !== 'done' && b.status !== 'failed' && b.editedTokens !== undefined) return { n: b.editedTokens, estimate: false };
  // Done, or being regenerated: the text shown is the one its stats counted until the new one replaces it.
  if (b.status !== 'edited' && b.status !== 'failed' && b.stats)
    return { n: b.stats.summaryTokens ?? b.stats.outputTokens, estimate: false };
  return { n: Math.ceil(b.summary.length / 4), estimate: true };
}

/**
 * Whether a compaction may still be adopted: its blocks are the head the next compaction replaces. A closed one
 * (adopted, cancelled, failed) is history: the gauges, the timeline's block band and the overview show it no more.
 */
export function compactionOpen(c: Pick<CompactionView, 'state'>): boolean {
  return c.state === 'running' || c.state === 'ready' || c.state === 'judging' || c.state === 'held';
}
