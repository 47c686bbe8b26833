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
  if (text.length <= MAX_TOOL_OUTPUT_CHARS && !overBudget(text, budget)) return text;
  const cutTo = (maxChars: number) => truncateHeadTail(text, { maxLines: 800, maxChars, headLines: 300, tailLines: 300 });
  let cut = cutTo(MAX_TOOL_OUTPUT_CHARS);
  // Shrunk in proportion to the count until it fits: a few rounds, since the head and tail are denser than the average.
  for (let round = 0; round < 4 && budget && overBudget(cut.text, budget); round++) {
    const n = budget.count(cut.text);
    cut = cutTo(Math.max(1_000, Math.floor((cut.text.length * budget.maxTokens * 0.95) / n)));
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

/** Whether the text counts more tokens than the budget; texts too short to do so are not counted. */
function overBudget(text: string, budget: ToolOutputBudget | undefined): boolean {
  // A UTF-16 unit counts at most ~2.5 tokens (rare CJK), the calibration a little more: shorter texts cannot be over.
  return budget !== undefined && text.length * 3 > budget.maxTokens && budget.count(text) > budget.maxTokens;
}
