/**
 * The chat shows a long tool output cut to its head and tail (viewModel.ts), but a compaction replaces the whole
 * output: a test run's error line in the middle is summarised or lost like any other. So the loss report judges the
 * session's own texts, and the view's messages only say where each one is.
 */
import type { SessionStore } from '../../core/session/sessionStore';
import type { ViewMessage } from '../../protocol/messages';

/** The whole text of a message by id, where the view's copy is cut (undefined: use the view's copy). */
export type FullText = (id: string) => string | undefined;

/** The full texts of the active context's tool outputs, the only messages the view cuts. */
export function fullTextOf(store: SessionStore | undefined): FullText {
  const byId = new Map<string, string>();
  for (const m of store?.active().messages ?? []) if (m.role === 'tool') byId.set(m.id, m.content);
  return (id) => byId.get(id);
}

/** The view's messages with every cut one's content swapped for its whole text. */
export function withFullTexts(messages: readonly ViewMessage[], fullText: FullText): ViewMessage[] {
  return messages.map((m) => {
    const text = m.truncated ? fullText(m.id) : undefined;
    return text === undefined ? m : { ...m, content: text, truncated: false };
  });
}
