import type { ChatMessage } from '../messages';
import type { CompactionPlan } from '../compaction/plan';
import { originalId } from '../session/sessionState';
import type { ExtractOptions, FactSource } from './extract';
import { extractFacts } from './extract';
import type { Fact } from './types';

export interface HeadFactOptions extends ExtractOptions {
  /**
   * The stored original of a context message, when the context holds a capped
   * copy: facts come from what the user saw, so a cap that cut one shows up
   * as a fact that did not reach its worker.
   */
  original?: (id: string) => ChatMessage | undefined;
}

/** Context indices the plan's workers summarise, ascending. */
export function headIndices(plan: CompactionPlan): number[] {
  return [...new Set(plan.blocks.flatMap((b) => b.messageIndices))].sort((a, b) => a - b);
}

/** The facts of a plan's head, with messageIndex pointing into the snapshot's context; pins included. */
export function headFacts(plan: CompactionPlan, opts: HeadFactOptions = {}): Fact[] {
  const ctx = plan.snapshot.context;
  const idx = headIndices(plan);
  const msgs: FactSource[] = idx.map((i) => {
    const m = ctx[i]!;
    const orig = opts.original?.(originalId(m.id));
    return orig ? ({ ...orig, id: originalId(m.id), kind: m.kind } as FactSource) : m;
  });
  return extractFacts(msgs, plan.snapshot.pins, opts).map((f) => (f.messageIndex >= 0 ? { ...f, messageIndex: idx[f.messageIndex]! } : f));
}
