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
    first: r.dropped
      .slice(0, FIRST)
      .map((f) => ({ kind: f.kind, key: f.key, text: f.text, messageId: f.messageId, messageIndex: f.messageIndex })),
  };
}
