import type { PendingCompaction } from '../compaction/pendingCompaction';
import type { CompactionRecord } from '../session/schema';
import type { SessionStore } from '../session/sessionStore';

/**
 * What a compaction was planned on: the compactions in force when its
 * snapshot was taken. New messages do not change it (they are the tail, or
 * the next-k steps a background summary is judged against); adopting or
 * undoing a compaction does, and then the plan no longer fits the session.
 */
export function compactionBase(store: SessionStore): string {
  const ids = store.snapshot.compactions.map((c) => c.id);
  return ids.length > 0 ? ids.join(',') : 'none';
}

/**
 * The version of the active context a split index refers to: its base and
 * the frame before the compactable messages (the pinned block appearing
 * shifts every index). The view sends it back with a dragged split.
 */
export function viewVersion(store: SessionStore, frameEnd: number): string {
  return `${compactionBase(store)}|${frameEnd}`;
}

const bases = new WeakMap<PendingCompaction, string>();

/** Records what `pending` was planned on (done where compactions are planned from a session). */
export function recordBase(pending: PendingCompaction, base: string): PendingCompaction {
  bases.set(pending, base);
  return pending;
}

/** Thrown when a compaction would be adopted onto a session it was not planned on. */
export class StaleCompactionError extends Error {
  constructor(
    readonly planned: string,
    readonly current: string,
  ) {
    super(
      'This compaction was planned on a different version of the conversation ' +
        `(compactions in force then: ${planned}; now: ${current}), so it was not adopted. Run it again on the current conversation.`,
    );
    this.name = 'StaleCompactionError';
  }
}

/**
 * Adopts `pending` into `store` after checking it was planned on the
 * compactions now in force. A pending with no recorded base (planned outside
 * a session) is adopted as before.
 */
export async function adoptPlanned(pending: PendingCompaction, store: SessionStore): Promise<CompactionRecord> {
  const planned = bases.get(pending);
  const current = compactionBase(store);
  if (planned !== undefined && planned !== current) throw new StaleCompactionError(planned, current);
  return pending.adopt(store);
}
