import type { ChatMessage } from '../messages';
import type { CompactionPlan } from '../compaction/plan';
import { buildWorkerPrompt } from '../compaction/workerPrompt';
import { keyMatcher } from './keys';
import type { Fact, FactKind, FactPosition } from './types';

/**
 * Which of a head's facts reach a worker's target text, after everything the
 * engine does before a model sees it (pre-trim, truncation, caps, partition).
 * A fact that does not is lost by the plan itself, whatever the model does.
 * Pins are not summarised by workers (they are merged verbatim) and are left out.
 */
export interface FactReach {
  factId: string;
  /** The block(s) whose messages hold the fact's source message. */
  ownBlocks: number[];
  /** Blocks whose target text carries the key. */
  reachedBlocks: number[];
}

export interface Tally {
  total: number;
  reached: number;
}

export interface ReachReport {
  layout: string;
  total: number;
  reached: number;
  /** Reached the worker of the block that holds the fact (not only a later mention). */
  reachedOwnBlock: number;
  byKind: Partial<Record<FactKind, Tally>>;
  byPosition: Partial<Record<FactPosition, Tally>>;
  perFact: FactReach[];
  /** Ids of facts that reached some worker. */
  reachedIds: Set<string>;
  /** The target text of every block, for survival checks that want it. */
  targets: string[];
}

function bump<K extends string>(rec: Partial<Record<K, Tally>>, k: K, hit: boolean): void {
  const t = (rec[k] ??= { total: 0, reached: 0 });
  t.total++;
  if (hit) t.reached++;
}

export function workerTargets(plan: CompactionPlan, count: (m: ChatMessage) => number, focus = plan.settings.focus): string[] {
  return plan.blocks.map((b) => buildWorkerPrompt(plan, b, focus, count).targetText);
}

export function reachability(
  plan: CompactionPlan,
  facts: readonly Fact[],
  count: (m: ChatMessage) => number,
  targets = workerTargets(plan, count),
): ReachReport {
  const owners = new Map<number, number[]>();
  for (const b of plan.blocks) for (const i of b.messageIndices) owners.set(i, [...(owners.get(i) ?? []), b.index]);
  const report: ReachReport = {
    layout: plan.settings.layout,
    total: 0,
    reached: 0,
    reachedOwnBlock: 0,
    byKind: {},
    byPosition: {},
    perFact: [],
    reachedIds: new Set(),
    targets,
  };
  for (const f of facts) {
    if (f.kind === 'pin' || f.messageIndex < 0) continue;
    const match = keyMatcher(f);
    const ownBlocks = owners.get(f.messageIndex) ?? [];
    let reachedBlocks = ownBlocks.filter((b) => match(targets[b]!));
    const own = reachedBlocks.length > 0;
    if (!own) reachedBlocks = targets.map((t, b) => (match(t) ? b : -1)).filter((b) => b >= 0);
    const hit = reachedBlocks.length > 0;
    report.total++;
    if (hit) {
      report.reached++;
      report.reachedIds.add(f.id);
    }
    if (own) report.reachedOwnBlock++;
    bump(report.byKind, f.kind, hit);
    bump(report.byPosition, f.position, hit);
    report.perFact.push({ factId: f.id, ownBlocks, reachedBlocks });
  }
  return report;
}
