import { truncateHeadTail } from '../pretrim';

/**
 * A tool can return megabytes (a build log, a minified bundle). The session
 * keeps what the model can use; the full text goes to a spill file the user
 * can open, so nothing is lost and the session file stays small.
 */
export interface SpillPort {
  /** Stores the full output; returns where it went (shown to the model and the user). */
  spill(callId: string, text: string): Promise<string>;
}

export const MAX_TOOL_OUTPUT_CHARS = 60_000;

/** The most of the context window one tool output may take, in tokens as the server counts them. */
export const TOOL_OUTPUT_WINDOW_SHARE = 1 / 3;

/**
 * Tokens, not characters, are what fill the window: 60,000 characters of base64 or minified code count 20-45K
 * tokens, more than a 32K window holds, and no compaction can shrink a tool output in the tail.
 */
export interface ToolOutputBudget {
  maxTokens: number;
  count(text: string): number;
}

export async function capToolOutput(
  text: string,
  callId: string,
  spill: SpillPort | undefined,
  budget?: ToolOutputBudget,
): Promise<string> {
  const fits = text.length <= MAX_TOOL_OUTPUT_CHARS;
  let over = fits ? tokensOver(text, budget) : undefined;
  if (fits && over === undefined) return text;
  const cutTo = (maxChars: number) => truncateHeadTail(text, { maxLines: 800, maxChars, headLines: 300, tailLines: 300 });
  let cut = cutTo(MAX_TOOL_OUTPUT_CHARS);
  // Each text is counted once: one that fits in characters was counted above, and is its own cut unless over 800 lines.
  if (cut.text !== text) over = tokensOver(cut.text, budget);
  // Shrunk in proportion to the count until it fits: a few rounds, since the head and tail are denser than the average.
  for (let round = 0; round < 4 && budget && over !== undefined; round++) {
    cut = cutTo(Math.max(1_000, Math.floor((cut.text.length * budget.maxTokens * 0.95) / over)));
    over = tokensOver(cut.text, budget);
  }
  let where = '';
  try {
    if (spill) where = ` The full output (${text.length} chars) is saved at ${await spill.spill(callId, text)}.`;
  } catch (err) {
    where = ` (Saving the full output failed: ${(err as Error).message}.)`;
  }
  const cutNote = `${cut.linesCut} lines / ${text.length - cut.text.length} chars cut.${where}`;
  return `${cut.text}\n[Output truncated: ${cutNote} Ask for a narrower range if you need the middle.]`;
}

/** The text's count when it is over the budget, else undefined; texts too short to be over are not counted. */
function tokensOver(text: string, budget: ToolOutputBudget | undefined): number | undefined {
  // A UTF-16 unit counts at most ~2.5 tokens (rare CJK), the calibration a little more: shorter texts cannot be over.
  if (budget === undefined || text.length * 3 <= budget.maxTokens) return undefined;
  const n = budget.count(text);
  return n > budget.maxTokens ? n : undefined;
}
