import type { ChatMessage } from './messages';
import type { SplitResult } from './splitPoint';
import { frameEnd } from './splitPoint';
import { userMessageIndices } from './turns';

/*
 * What every split holds to, whatever chose it: a tool batch still waiting for results stays out of the head; and in
 * one long agentic turn, the request it works on is kept verbatim.
 */

/**
 * The index of the assistant message whose tool batch ends the messages with a call still unanswered, if any. The
 * missing results (a tool still running, or waiting for the user's approval) are appended later, after whatever the
 * context holds by then: with the call summarised they would follow the summary with no call before them, and a strict
 * server rejects that request and every one after it. A result that reports an error answers its call; parallel calls
 * are answered only when every one of them has its result.
 */
export function openToolBatchStart(messages: readonly ChatMessage[]): number | undefined {
  const answered = new Set<string>();
  let i = messages.length - 1;
  for (; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'tool') break;
    answered.add(m.tool_call_id);
  }
  const batch = messages[i];
  if (batch?.role !== 'assistant' || !batch.tool_calls?.length) return undefined;
  return batch.tool_calls.every((c) => answered.has(c.id)) ? undefined : i;
}

/**
 * Whatever chose the split, a tool batch still waiting for results stays out of the head (see openToolBatchStart):
 * the tail starts at its call at the latest.
 */
export function keepOpenBatchInTail<T extends SplitResult>(messages: readonly ChatMessage[], split: T): T {
  const open = openToolBatchStart(messages);
  if (open === undefined) return split;
  const headIndices = split.headIndices.filter((i) => i < open);
  const keptIndices = split.keptIndices.filter((i) => i < open);
  const unchanged =
    headIndices.length === split.headIndices.length && keptIndices.length === split.keptIndices.length && split.tailStartIndex <= open;
  if (unchanged) return split;
  return {
    ...split,
    tailStartIndex: Math.min(split.tailStartIndex, open),
    keptIndices,
    headIndices,
    note: `${split.note}; the tool batch at message ${open} still awaits results, so the tail starts there at the latest`,
  };
}

/** The most tokens the request a long turn works on may have to be kept verbatim when its turn is summarised. */
export const ACTIVE_REQUEST_KEEP_TOKENS = 4096;

/**
 * One long agentic turn: its request, the user's last message, would be summarised with the work it asked for, and
 * its exact words (the task, the rules given with it) would live on only as a summary's paraphrase, a second
 * compaction's paraphrase of that. Kept verbatim before the summary instead, when it is not too long.
 */
export function keepActiveRequest(messages: readonly ChatMessage[], tokens: readonly number[], split: SplitResult): SplitResult {
  const ask = userMessageIndices(messages).at(-1);
  if (ask === undefined || ask < frameEnd(messages) || ask >= split.tailStartIndex || tokens[ask]! > ACTIVE_REQUEST_KEEP_TOKENS)
    return split;
  return {
    ...split,
    keptIndices: [...split.keptIndices.filter((i) => i < ask), ask, ...split.keptIndices.filter((i) => i > ask)],
    headIndices: split.headIndices.filter((i) => i !== ask),
    note: `${split.note}; the request this turn works on (message ${ask}) is kept verbatim`,
  };
}
