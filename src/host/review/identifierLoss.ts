/**
 * The fallback loss report: identifiers, paths and exception names of each
 * block's originals that its summary does not mention. Pure (no vscode), so
 * it runs in unit tests; the fidelity module's extractor replaces it where
 * present (see lossWithFallback), and it is only reached when that one throws.
 */
import { summarisedBy, type CompactionView, type ViewMessage } from '../../protocol/messages';
import { lossReportView, type FactKindView, type LossFactView, type LossReportView } from '../../protocol/review';
import { allMatches, EXCEPTION_RE, identifiersIn, pathMatches, withoutPaths } from '../../core/fidelity/patterns';
import { pinnedTexts } from './fidelityLoss';

export interface RawFact {
  kind: FactKindView;
  key: string;
}

/**
 * Facts of one text, each key once: paths, then exception names, then identifiers. The fidelity module's own
 * scanners find them (windowed, so a 10 MB line cannot overflow the regex stack), with paths blanked before the
 * identifier patterns run, so a name inside a path is the path's. A bare file name after its path
 * (migrate.ts after src/db/migrate.ts) is the same fact: every path's tails are remembered, so the check is one
 * lookup per key, not a search of every fact found so far.
 */
export function identifierFacts(text: string): RawFact[] {
  const out: RawFact[] = [];
  const seen = new Set<string>();
  const add = (kind: FactKindView, key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ kind, key });
  };
  const paths = pathMatches(text);
  for (const { path } of paths) {
    if (seen.has(path)) continue;
    add('path', path);
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) seen.add(path.slice(i + 1));
  }
  const rest = withoutPaths(text, paths);
  for (const name of allMatches(EXCEPTION_RE, rest)) add('error', name);
  for (const name of identifiersIn(rest)) add('identifier', name);
  return out;
}

function messageText(m: ViewMessage): string {
  const calls = m.toolCalls?.map((c) => `${c.name} ${c.arguments}`).join('\n') ?? '';
  return calls ? `${m.content}\n${calls}` : m.content;
}

/**
 * Per block with a summary: the facts of its messages that neither the summary nor the pinned block carries.
 * A fact is counted once per head (the first message that states it).
 */
export function identifierLoss(messages: readonly ViewMessage[], c: CompactionView): LossReportView {
  const pinned = pinnedTexts(messages);
  const seen = new Set<string>();
  const dropped: LossFactView[] = [];
  let total = 0;
  for (const b of c.blocks) {
    const summary = b.summary ?? null;
    for (const i of summarisedBy(b)) {
      const m = messages[i];
      if (!m) break;
      if (m.role === 'system') continue;
      for (const f of identifierFacts(messageText(m))) {
        if (seen.has(f.key)) continue;
        seen.add(f.key);
        total++;
        if (summary !== null && !summary.includes(f.key) && !pinned.some((p) => p.includes(f.key))) {
          dropped.push({ id: `${m.id}:${f.key}`, kind: f.kind, key: f.key, text: f.key, messageId: m.id, messageIndex: i, block: b.index });
        }
      }
    }
  }
  return lossReportView(c.id, total, dropped, 'identifiers');
}
