import type { Mentions, Salience } from '../fidelity/salience';
import { conversationMentions } from '../fidelity/salience';
import type { ChatMessage } from '../messages';
import type { PretrimOptions } from '../pretrim';
import { DEFAULT_PRETRIM, truncateHeadTail } from '../pretrim';
import { TextMemo } from '../textMemo';

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
  mentions: Mentions | undefined;
  texts: Map<number, string>;
}

const cuts = new WeakMap<readonly ChatMessage[], Cuts>();

/**
 * A long output's cut, kept across conversations: the next compaction of the same session (a retry, a new focus, a
 * regenerated block, a moved split) sees the same outputs in a new conversation. Besides the output's own text, the
 * cut depends only on the answers to "is this token mentioned after the output?" that scoring its lines asked, so
 * it stands while every one of those answers does.
 */
interface KeptCut {
  limits: string;
  text: string;
  /** Each token scoring looked up, with its answer then. */
  asked: Map<string, boolean>;
}

const kept = new TextMemo(8_000_000);
const keptCuts = kept.map<KeptCut>();

/** Message i's text after tier 2: its own text unless it is a tool output over the pre-trim limits. */
export function cutText(context: readonly ChatMessage[], i: number): string {
  const salient = DEFAULT_PRETRIM.salience !== false;
  let c = cuts.get(context);
  if (!c || c.salient !== salient) cuts.set(context, (c = { salient, mentions: undefined, texts: new Map() }));
  const m = context[i]!;
  if (m.role !== 'tool') return m.content ?? '';
  let text = c.texts.get(i);
  if (text === undefined) {
    text = salient ? salientCut(c, context, i, m.content) : truncateHeadTail(m.content, DEFAULT_PRETRIM).text;
    c.texts.set(i, text);
  }
  return text;
}

function salientCut(c: Cuts, context: readonly ChatMessage[], i: number, content: string): string {
  const limits = limitsKey(DEFAULT_PRETRIM);
  // The mentions are gathered when first needed: most outputs fit and score no line.
  const mentions = () => (c.mentions ??= conversationMentions(context));
  const prior = keptCuts.get(content);
  if (prior && prior.limits === limits && stillAnswered(prior.asked, mentions(), i)) return prior.text;
  const asked = new Map<string, boolean>();
  let line: Salience | undefined;
  const salience: Salience = (l) => (line ??= mentions().salience(i, (t, later) => asked.set(t, later)))(l);
  const text = truncateHeadTail(content, DEFAULT_PRETRIM, salience).text;
  if (text !== content) {
    kept.reserve(content.length + text.length);
    keptCuts.set(content, { limits, text, asked });
  }
  return text;
}

function stillAnswered(asked: ReadonlyMap<string, boolean>, mentions: Mentions, i: number): boolean {
  for (const [token, later] of asked) if (mentions.mentionedAfter(token, i) !== later) return false;
  return true;
}

function limitsKey(o: PretrimOptions): string {
  return `${o.maxLines}/${o.maxChars}/${o.headLines}/${o.tailLines}`;
}

/** `m` (message i of the conversation, in any form) with its tool output cut as cutText says. */
export function withCut<M extends ChatMessage>(context: readonly ChatMessage[], i: number, m: M): M {
  if (m.role !== 'tool') return m;
  const text = cutText(context, i);
  return text === m.content ? m : ({ ...m, content: text } as M);
}
