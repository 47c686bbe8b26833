/**
 * The review editor's loss report from the fidelity module: every fact of the
 * head (identifiers, paths, numbers with units, error lines, test results,
 * decisions, constraints, instructions), judged once its block has a summary,
 * kept when any summary of the compaction, or the pinned block, carries its
 * key token exactly.
 */
import { extractFacts, factsKeptIn, type Fact, type FactSource } from '../../core/fidelity';
import { summarisedBy, type CompactionView, type ViewMessage } from '../../protocol/messages';
import { lossReportView, type LossFactView, type LossReportView } from '../../protocol/review';

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
  for (const b of c.blocks) for (const i of summarisedBy(b)) blockOf.set(i, b.index);
  const facts = headFactsMemo(head, c, blockOf);
  const summarised = new Set(c.blocks.filter((b) => b.summary !== null).map((b) => b.index));
  const judged = facts.filter((f) => summarised.has(blockOf.get(f.messageIndex)!));
  const kept = factsKeptIn(judged, [...c.blocks.flatMap((b) => (b.summary !== null ? [b.summary] : [])), ...pinnedTexts(messages)]);
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
  return lossReportView(c.id, facts.length, dropped, 'fidelity');
}

/**
 * The pinned block's text: compaction re-inserts it verbatim ahead of the summary, so a fact the user kept with a pin
 * ("Keep this") survives whatever the summaries say.
 */
export function pinnedTexts(messages: readonly ViewMessage[]): string[] {
  return messages.filter((m) => m.kind === 'pinned').map((m) => m.content);
}

/**
 * Extraction costs ~100 ms on a 120K-token head: done once per head and partition, not per block delta nor per
 * compaction of the same head. Callers build their message lists afresh (viewMessages), so the memo compares what
 * extraction reads, not the list: the strings are the session's own, so the comparison is mostly of references.
 */
let memo: { inputs: unknown[]; key: string; facts: Fact[] } | undefined;

/** Everything extractFacts reads of the head, flattened in order (positions follow from the order). */
function extractionInputs(head: readonly ViewMessage[]): unknown[] {
  const out: unknown[] = [];
  for (const m of head) {
    out.push(m.role, m.id, m.kind, m.content);
    if (m.role === 'tool') out.push(m.toolCallId);
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) out.push(c.id, c.name, c.arguments);
  }
  return out;
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function headFactsMemo(head: readonly ViewMessage[], c: CompactionView, blockOf: Map<number, number>): Fact[] {
  const key = c.blocks.map((b) => `${b.firstMessage}-${b.lastMessage}${b.kept ? `:${b.kept.join('.')}` : ''}`).join(',');
  const inputs = extractionInputs(head);
  if (memo && memo.key === key && sameInputs(memo.inputs, inputs)) return memo.facts;
  const facts = extractFacts(head.map(source)).filter((f) => blockOf.has(f.messageIndex));
  memo = { inputs, key, facts };
  return facts;
}
