import type { ChatMessage } from '../messages';
import type { CompactionPlan } from '../compaction/plan';
import { contextText, factsKeptIn } from './survival';
import { headFacts } from './head';
import { reachability } from './reach';
import type { HeadFactOptions } from './head';
import type { DroppedFact, Fact, FactKind, LossReport } from './types';
import { FACT_KINDS, FACT_KIND_LABELS } from './types';

export interface LossOptions {
  /** Facts that reached a worker's target text; a dropped fact outside it is an engine defect. */
  reached?: ReadonlySet<string>;
  /** The block that summarised a message (by index in the extraction's context). */
  blockOfMessage?: (messageIndex: number) => number | undefined;
}

function label(kind: FactKind, n: number): string {
  return `${n} ${n === 1 ? FACT_KIND_LABELS[kind].one : FACT_KIND_LABELS[kind].many}`;
}

/** "dropped 7 of 212 facts: 3 identifiers, 2 error lines, …" with each dropped fact and where it came from. */
export function lossReport(facts: readonly Fact[], kept: ReadonlySet<string>, opts: LossOptions = {}): LossReport {
  const dropped = facts.filter((f) => !kept.has(f.id)).sort((a, b) => a.messageIndex - b.messageIndex);
  const byKind = FACT_KINDS.map((kind) => ({
    kind,
    dropped: dropped.filter((f) => f.kind === kind).length,
    total: facts.filter((f) => f.kind === kind).length,
  })).filter((k) => k.dropped > 0);
  const list: DroppedFact[] = dropped.map((f) => {
    const block = f.messageIndex >= 0 ? opts.blockOfMessage?.(f.messageIndex) : undefined;
    return {
      factId: f.id,
      kind: f.kind,
      key: f.key,
      text: f.text,
      messageId: f.messageId,
      position: f.position,
      ...(block !== undefined ? { block } : {}),
      cause: opts.reached && !opts.reached.has(f.id) ? 'engine' : 'model',
    };
  });
  const parts = [...byKind].sort((a, b) => b.dropped - a.dropped).map((k) => label(k.kind, k.dropped));
  const headline =
    dropped.length === 0 ? `kept all ${facts.length} facts` : `dropped ${dropped.length} of ${facts.length} facts: ${parts.join(', ')}`;
  return {
    total: facts.length,
    kept: facts.length - dropped.length,
    dropped: dropped.length,
    byKind,
    facts: list,
    missingPins: dropped.filter((f) => f.kind === 'pin').map((f) => f.messageId),
    headline,
  };
}

/** Maps a context index to the block of a plan that summarises it. */
export function blockLookup(plan: CompactionPlan): (messageIndex: number) => number | undefined {
  const map = new Map<number, number>();
  for (const b of plan.blocks) for (const i of b.messageIndices) if (!map.has(i)) map.set(i, b.index);
  return (i) => map.get(i);
}

/**
 * The loss report of a finished (or edited) compaction before adoption:
 * facts of the head that the context after adoption no longer carries.
 * `after` is the projected context (pins, summary, kept messages and tail).
 */
export function compactionLoss(
  plan: CompactionPlan,
  after: readonly ChatMessage[],
  opts: {
    reached?: ReadonlySet<string>;
    facts?: readonly Fact[];
    /** With a token counter the report also says which drops the engine caused (facts that never reached a worker). */
    count?: (m: ChatMessage) => number;
  } & HeadFactOptions = {},
): { facts: Fact[]; report: LossReport } {
  const facts = opts.facts ? [...opts.facts] : headFacts(plan, opts);
  const reached = opts.reached ?? (opts.count ? reachability(plan, facts, opts.count).reachedIds : undefined);
  const kept = factsKeptIn(facts, contextText(after));
  return { facts, report: lossReport(facts, kept, { blockOfMessage: blockLookup(plan), ...(reached ? { reached } : {}) }) };
}
