import type { Salience } from '../fidelity/salience';
import { conversationSalience } from '../fidelity/salience';
import type { ChatMessage } from '../messages';
import { DEFAULT_PRETRIM, truncateToolOutput } from '../pretrim';

/**
 * Tier-2 cuts of a conversation's long tool outputs, one per message, shared
 * by everything a compaction builds from that conversation: the planner's
 * head model, each block's worker prompt and the pre-trimmed context before
 * it. A line counts as salient when the conversation mentions its identifiers
 * anywhere after it, the kept tail included (it is what the agent works on
 * next), so a message's cut does not depend on which prompt it lands in. The
 * salience scan is most of pre-trim's cost, and it runs once per conversation.
 */
interface Cuts {
  /** Whether these cuts keep salient lines (DEFAULT_PRETRIM.salience; comparisons turn it off). */
  salient: boolean;
  salienceAt: ((i: number) => Salience) | undefined;
  texts: Map<number, string>;
}

const cuts = new WeakMap<readonly ChatMessage[], Cuts>();

/** Message i's text after tier 2: its own text unless it is a tool output over the pre-trim limits. */
export function cutText(context: readonly ChatMessage[], i: number): string {
  const salient = DEFAULT_PRETRIM.salience !== false;
  let c = cuts.get(context);
  if (!c || c.salient !== salient) cuts.set(context, (c = { salient, salienceAt: undefined, texts: new Map() }));
  const m = context[i]!;
  if (m.role !== 'tool') return m.content ?? '';
  let text = c.texts.get(i);
  if (text === undefined) {
    const known = c;
    // The mentions are gathered on the first line scored: most outputs fit and score none.
    let line: Salience | undefined;
    const salience: Salience = (l) => (line ??= (known.salienceAt ??= conversationSalience(context))(i))(l);
    text = truncateToolOutput(m, DEFAULT_PRETRIM, salient ? salience : undefined).message.content;
    c.texts.set(i, text);
  }
  return text;
}

/** `m` (message i of the conversation, in any form) with its tool output cut as cutText says. */
export function withCut<M extends ChatMessage>(context: readonly ChatMessage[], i: number, m: M): M {
  if (m.role !== 'tool') return m;
  const text = cutText(context, i);
  return text === m.content ? m : ({ ...m, content: text } as M);
}
