import type { ToolSpec } from '../ports';
import type { SessionStore } from '../session/sessionStore';
import type { SplitChoice } from '../splitPoint';
import { planSplit } from '../splitPoint';
import type { TokenLedger } from '../tokens/tokenLedger';
import type { CompactionDeps } from './pendingCompaction';
import { PendingCompaction } from './pendingCompaction';
import type { CompactionSettings, CompactionSnapshot } from './plan';
import { planCompaction } from './plan';

export type { SplitChoice } from '../splitPoint';

/**
 * Freezes the session's active context and plans a compaction of it. The
 * agent may keep appending to the session; the snapshot does not change.
 */
export function snapshotSession(
  store: SessionStore,
  ledger: TokenLedger,
  choice: SplitChoice,
  tools: readonly ToolSpec[],
  settings: Pick<CompactionSettings, 'contextWindow'> & { replyReserve: number },
): CompactionSnapshot {
  const active = store.active();
  const context = active.messages.slice();
  const tokens = ledger.countAll(context);
  const { split } = planSplit({ messages: context, tokens }, choice, settings.contextWindow, settings.replyReserve);
  return {
    context,
    tokens,
    split,
    priorDepth: active.compaction?.depth ?? 0,
    tools,
    strategy: 'manualIndex' in choice ? 'manual' : choice.strategy,
    pins: store.snapshot.pins.slice(),
  };
}

export function createCompaction(snapshot: CompactionSnapshot, settings: CompactionSettings, deps: CompactionDeps): PendingCompaction {
  // The planner spreads target-block workers over every endpoint the engine will use.
  const replicas = 1 + (deps.replicas?.length ?? 0);
  return new PendingCompaction(planCompaction(snapshot, { ...settings, replicas }), deps);
}
