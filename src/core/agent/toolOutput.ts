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

export async function capToolOutput(text: string, callId: string, spill: SpillPort | undefined): Promise<string> {
  if (text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  const cut = truncateHeadTail(text, { maxLines: 800, maxChars: MAX_TOOL_OUTPUT_CHARS, headLines: 300, tailLines: 300 });
  let where = '';
  try {
    if (spill) where = ` The full output (${text.length} chars) is saved at ${await spill.spill(callId, text)}.`;
  } catch (err) {
    where = ` (Saving the full output failed: ${(err as Error).message}.)`;
  }
  const cutNote = `${cut.linesCut} lines / ${text.length - cut.text.length} chars cut.${where}`;
  return `${cut.text}\n[Output truncated: ${cutNote} Ask for a narrower range if you need the middle.]`;
}
