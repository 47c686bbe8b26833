/**
 * The side bar's loss report in brief: the same report the review editor
 * shows (fidelity facts, identifiers as a fallback), cut to its headline and
 * the first few dropped facts, so the user sees what would be lost before
 * pressing Adopt without opening the editor.
 */
import type { CompactionView, LossHeadlineView, ViewMessage } from '../../protocol/messages';
import { droppedCount, lossHeadline as headlineText } from '../../protocol/review';
import { lossWithFallback } from './reviewBridge';

const FIRST = 5;

export function lossHeadline(messages: readonly ViewMessage[], c: CompactionView): LossHeadlineView | null {
  if (c.blocks.length === 0) return null;
  const r = lossWithFallback([...messages], c);
  return {
    headline: headlineText(r),
    dropped: droppedCount(r),
    first: firstLines(r.dropped),
  };
}

/**
 * The first few dropped lines, each once: one line can hold an error, a decision and a path (three facts), and Keep
 * pins the line, so the UI review saw the same sentence listed three times with three Keep buttons. Their kinds and
 * keys are joined instead.
 */
function firstLines(dropped: ReturnType<typeof lossWithFallback>['dropped']): LossHeadlineView['first'] {
  const out: LossHeadlineView['first'] = [];
  const at = new Map<string, number>();
  for (const f of dropped) {
    const id = `${f.messageId}\n${f.text}`;
    const k = at.get(id);
    if (k !== undefined) {
      const e = out[k]!;
      if (!e.kind.split(', ').includes(f.kind)) e.kind += `, ${f.kind}`;
      if (!e.key.split(' · ').includes(f.key)) e.key += ` · ${f.key}`;
      continue;
    }
    if (out.length === FIRST) continue;
    at.set(id, out.length);
    out.push({ kind: f.kind, key: f.key, text: f.text, messageId: f.messageId, messageIndex: f.messageIndex });
  }
  return out;
}
