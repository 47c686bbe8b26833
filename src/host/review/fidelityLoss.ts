/**
 * The review editor's loss report from the fidelity module: every fact of the
 * head (identifiers, paths, numbers with units, error lines, test results,
 * decisions, constraints, instructions), judged once its block has a summary,
 * kept when any summary of the compaction carries its key token exactly.
 */
import { extractFacts, factsKeptIn, type Fact, type FactSource } from '../../core/fidelity';
import type { CompactionView, ViewMessage } from '../../protocol/messages';
import type { LossFactView, LossReportView } from '../../protocol/review';

function source(m: ViewMessage): FactSource {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content, id: m.id, kind: m.kind };
    case 'user':
      return { role: 'user', content: m.content, id: m.id, kind: m.kind };
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.toolCallId ?? '', id: m.id, kind: m.kind };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
        id: m.id,
        kind: m.kind,
      };
  }
}

export function fidelityLoss(messages: readonly ViewMessage[], c: CompactionView): LossReportView {
  const last = c.blocks.reduce((a, b) => Math.max(a, b.lastMessage), -1);
  const head = messages.slice(0, last + 1);
  const blockOf = new Map<number, number>();
  for (const b of c.blocks) for (let i = b.firstMessage; i <= b.lastMessage; i++) blockOf.set(i, b.index);
  const facts = headFactsMemo(head, messages, c, blockOf);
  const summarised = new Set(c.blocks.filter((b) => b.summary !== null).map((b) => b.index));
  const judged = facts.filter((f) => summarised.has(blockOf.get(f.messageIndex)!));
  const kept = factsKeptIn(
    judged,
    c.blocks.flatMap((b) => (b.summary !== null ? [b.summary] : [])),
  );
  const dropped: LossFactView[] = judged
    .filter((f) => !kept.has(f.id))
    .map((f) => ({
      id: f.id,
      kind: f.kind,
      key: f.key,
      text: f.text,
      // The view addresses messages by their id in the active context (the fact's id may be an original's).
      messageId: messages[f.messageIndex]!.id,
      messageIndex: f.messageIndex,
      block: blockOf.get(f.messageIndex)!,
    }));
  return { compactionId: c.id, total: facts.length, dropped, source: 'fidelity' };
}

/** Extraction costs ~100 ms on a 120K-token head: done once per message list and partition, not per block delta. */
const memo = new WeakMap<readonly ViewMessage[], { key: string; facts: Fact[] }>();

function headFactsMemo(
  head: readonly ViewMessage[],
  messages: readonly ViewMessage[],
  c: CompactionView,
  blockOf: Map<number, number>,
): Fact[] {
  const key = c.blocks.map((b) => `${b.firstMessage}-${b.lastMessage}`).join(',');
  const hit = memo.get(messages);
  if (hit && hit.key === key) return hit.facts;
  const facts = extractFacts(head.map(source)).filter((f) => blockOf.has(f.messageIndex));
  memo.set(messages, { key, facts });
  return facts;
}
