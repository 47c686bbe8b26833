/**
 * A compaction's blocks index the active context it started on. A first pin puts the pinned block at the frame and
 * shifts every later message by one: the same messages, at new indices, so the blocks move with their ids. Adopting
 * the compaction archives them: then nothing moves, and the view keeps the version it started on, which tells the
 * webview not to use the indices (indicesHold).
 */
import type { BlockView, CompactionView } from '../protocol/messages';

/** An active context: the version the view names it by, and its message ids in order (computed when needed). */
export interface ContextRef {
  version: string;
  ids: () => readonly string[];
}

/** Where message i of the context `then` is in the context `now` (undefined: not in it any more). */
export type IndexMove = (i: number) => number | undefined;

export function indexMove(thenIds: readonly string[], nowIds: readonly string[]): IndexMove {
  const at = new Map(nowIds.map((id, i) => [id, i]));
  return (i) => {
    const id = thenIds[i];
    return id === undefined ? undefined : at.get(id);
  };
}

/** The blocks at their indices in the context `now`, or null when one of their messages is no longer in it. */
export function shiftBlocks(blocks: readonly BlockView[], move: IndexMove): BlockView[] | null {
  const out: BlockView[] = [];
  for (const b of blocks) {
    const first = move(b.firstMessage);
    const last = move(b.lastMessage);
    const kept = b.kept?.map(move);
    if (first === undefined || last === undefined || kept?.some((k) => k === undefined)) return null;
    out.push({ ...b, firstMessage: first, lastMessage: last, ...(kept ? { kept: kept as number[] } : {}) });
  }
  return out;
}

/**
 * The view with its blocks and its tail at their messages' indices in the context `now` (its messages moved by
 * `move`; a tail at the old context's end follows its last message, since messages appended later are after the
 * split), or as it was when one of its messages is gone.
 */
export function shiftedView(v: CompactionView, thenLength: number, now: ContextRef, move: IndexMove): CompactionView {
  const blocks = shiftBlocks(v.blocks, move);
  if (!blocks) return v;
  const t = v.tailStartIndex;
  const tail = t === undefined ? undefined : t >= thenLength ? (thenLength > 0 ? (move(thenLength - 1) ?? -2) + 1 : 0) : move(t);
  return { ...v, blocks, version: now.version, tailStartIndex: tail !== undefined && tail >= 0 ? tail : undefined };
}
