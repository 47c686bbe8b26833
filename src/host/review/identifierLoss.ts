/**
 * The fallback loss report: identifiers, paths and exception names of each
 * block's originals that its summary does not mention. Pure (no vscode), so
 * it runs in unit tests; the fidelity module's extractor replaces it where
 * present (see lossForReview).
 */
import type { CompactionView, ViewMessage } from '../../protocol/messages';
import type { FactKindView, LossFactView, LossReportView } from '../../protocol/review';

// Order matters: a path is also a run of identifier characters, so paths are matched first.
const PATH =
  /(?:\.{0,2}\/)?(?:[\w.-]+\/)+[\w.-]+\.[A-Za-z]{1,5}\b|\b[\w-]+\.(?:ts|js|tsx|py|go|rs|json|md|yaml|yml|toml|sql|sh|c|h|cpp|java)\b/g;
const ERROR = /\b[A-Z][A-Za-z]*(?:Error|Exception)\b/g;
// camelCase, PascalCase with an inner capital, snake_case, or SCREAMING_CASE: names a reader cannot guess back.
const IDENT = /\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*_[a-z0-9_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/g;

export interface RawFact {
  kind: FactKindView;
  key: string;
}

/** Facts of one text, each key once, in order of first appearance. */
export function identifierFacts(text: string): RawFact[] {
  const out: RawFact[] = [];
  const seen = new Set<string>();
  // A key inside a longer one already found (migrate.ts in src/db/migrate.ts) is the same fact.
  const add = (kind: FactKindView, key: string) => {
    if (seen.has(key) || out.some((f) => f.key.includes(key))) return;
    seen.add(key);
    out.push({ kind, key });
  };
  for (const m of text.matchAll(PATH)) add('path', m[0]);
  for (const m of text.matchAll(ERROR)) add('error', m[0]);
  for (const m of text.matchAll(IDENT)) add('identifier', m[0]);
  return out;
}

function messageText(m: ViewMessage): string {
  const calls = m.toolCalls?.map((c) => `${c.name} ${c.arguments}`).join('\n') ?? '';
  return calls ? `${m.content}\n${calls}` : m.content;
}

/**
 * Per block with a summary: the facts of its messages that the summary lacks.
 * A fact is counted once per head (the first message that states it).
 */
export function identifierLoss(messages: readonly ViewMessage[], c: CompactionView): LossReportView {
  const seen = new Set<string>();
  const dropped: LossFactView[] = [];
  let total = 0;
  for (const b of c.blocks) {
    const summary = b.summary ?? null;
    for (let i = b.firstMessage; i <= b.lastMessage && i < messages.length; i++) {
      const m = messages[i]!;
      if (m.role === 'system') continue;
      for (const f of identifierFacts(messageText(m))) {
        if (seen.has(f.key)) continue;
        seen.add(f.key);
        total++;
        if (summary !== null && !summary.includes(f.key)) {
          dropped.push({ id: `${m.id}:${f.key}`, kind: f.kind, key: f.key, text: f.key, messageId: m.id, messageIndex: i, block: b.index });
        }
      }
    }
  }
  return { compactionId: c.id, total, dropped, source: 'identifiers' };
}
