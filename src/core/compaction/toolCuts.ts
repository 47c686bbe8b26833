import { focusSalience, focusTerms, type FocusTerms } from '../fidelity/focusSalience';
import type { Mentions, Salience } from '../fidelity/salience';
import { conversationMentions } from '../fidelity/salience';
import type { ChatMessage } from '../messages';
import type { PretrimOptions } from '../pretrim';
import { DEFAULT_PRETRIM, truncateHeadTail } from '../pretrim';
import { TextMemo } from '../textMemo';

/**
 * Tier-2 cuts of a conversation's long tool outputs, one per message and
 * focus, shared by everything a compaction builds from that conversation: the
 * planner's head model, each block's worker prompt and the pre-trimmed
 * context before it. A line counts as salient when the conversation mentions
 * its identifiers anywhere after it, the kept tail included (it is what the
 * agent works on next), so a message's cut does not depend on which prompt it
 * lands in: every prompt that carries the message carries the same bytes, and
 * the server's prefix cache serves them to every worker. The salience scan is
 * most of pre-trim's cost, and it runs once per conversation.
 *
 * The compaction's focus (`/compact "focus…"`) is the one input besides the
 * conversation: a line with one of its distinctive terms is kept (salience.ts,
 * focusSalience). Cuts are kept per focus, keyed by its terms, so the property
 * above holds for each focus: the same focus gives the same bytes everywhere,
 * and a compaction without one (or with one of stop words only) gets exactly
 * the cuts it always got.
 */
interface Cuts {
  /** Whether these cuts keep salient lines (DEFAULT_PRETRIM.salience; comparisons turn it off). */
  salient: boolean;
  mentions: Mentions | undefined;
  /** Cut texts by focus key ('' for none), then message index. */
  texts: Map<string, Map<number, string>>;
}

const cuts = new WeakMap<readonly ChatMessage[], Cuts>();

/**
 * A long output's cut, kept across conversations: the next compaction of the same session (a retry, a new focus, a
 * regenerated block, a moved split) sees the same outputs in a new conversation. Besides the output's own text and
 * the focus's terms (the key it is kept under), the cut depends only on the answers to "is this token mentioned
 * after the output?" that scoring its lines asked, so it stands while every one of those answers does.
 */
interface KeptCut {
  limits: string;
  text: string;
  /** Each token scoring looked up, with its answer then. */
  asked: Map<string, boolean>;
}

const kept = new TextMemo(8_000_000);
/** By output text, then focus key ('' for none). */
const keptCuts = kept.map<Map<string, KeptCut>>();

/**
 * Message i's text after tier 2: its own text unless it is a tool output over the pre-trim limits. `focus` is the
 * compaction's focus text, if any (the words that name something are what count; see focusTerms).
 */
export function cutText(context: readonly ChatMessage[], i: number, focus?: string): string {
  const salient = DEFAULT_PRETRIM.salience !== false;
  let c = cuts.get(context);
  if (!c || c.salient !== salient) cuts.set(context, (c = { salient, mentions: undefined, texts: new Map() }));
  const m = context[i]!;
  if (m.role !== 'tool') return m.content ?? '';
  // The plain ladder (salience off) keeps no line for its content, the focus's included.
  const terms = salient ? focusTerms(focus) : undefined;
  const key = terms?.key ?? '';
  let texts = c.texts.get(key);
  if (!texts) c.texts.set(key, (texts = new Map()));
  let text = texts.get(i);
  if (text === undefined) {
    text = salient ? salientCut(c, context, i, m.content, terms) : truncateHeadTail(m.content, DEFAULT_PRETRIM).text;
    texts.set(i, text);
  }
  return text;
}

function salientCut(c: Cuts, context: readonly ChatMessage[], i: number, content: string, terms: FocusTerms | undefined): string {
  const limits = limitsKey(DEFAULT_PRETRIM);
  const key = terms?.key ?? '';
  // The mentions are gathered when first needed: most outputs fit and score no line.
  const mentions = () => (c.mentions ??= conversationMentions(context));
  const prior = keptCuts.get(content)?.get(key);
  if (prior && prior.limits === limits && stillAnswered(prior.asked, mentions(), i)) return prior.text;
  const asked = new Map<string, boolean>();
  let line: Salience | undefined;
  const scorer = (): Salience => {
    const s = mentions().salience(i, (t, later) => asked.set(t, later));
    return terms ? focusSalience(terms, content, s) : s;
  };
  const salience: Salience = (l) => (line ??= scorer())(l);
  const text = truncateHeadTail(content, DEFAULT_PRETRIM, salience).text;
  if (text !== content) {
    kept.reserve(content.length + text.length);
    let byFocus = keptCuts.get(content);
    if (!byFocus) keptCuts.set(content, (byFocus = new Map()));
    byFocus.set(key, { limits, text, asked });
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

/** `m` (message i of the conversation, in any form) with its tool output cut as cutText says, for `focus` if given. */
export function withCut<M extends ChatMessage>(context: readonly ChatMessage[], i: number, m: M, focus?: string): M {
  if (m.role !== 'tool') return m;
  const text = cutText(context, i, focus);
  return text === m.content ? m : ({ ...m, content: text } as M);
}
