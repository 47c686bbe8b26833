import { ERROR_LINE_RE } from '../fidelity/patterns';
import { baseSalience } from '../fidelity/salience';
import type { Salience } from '../fidelity/salience';
import { chunkText, selectSegments } from '../fidelity/select';

/**
 * A tool can return megabytes (a build log, a minified bundle). The session
 * keeps what the model can use; the full text goes to a spill file the user
 * can open, and `recall` searches, so nothing is lost and the session file stays small.
 */
export interface SpillPort {
  /** Stores the full output; returns where it went (shown to the model and the user). */
  spill(callId: string, text: string): Promise<string>;
  /**
   * The full outputs stored so far, one at a time, for `recall` to search: the spill files lie outside the
   * workspace, where the agent's file tools cannot read them. Without it, a cut part is the user's to open only.
   */
  spilled?(): AsyncIterable<SpilledOutput>;
}

export interface SpilledOutput {
  /** What recall calls it (the spill file's name). */
  name: string;
  text: string;
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
  const cutter = new OutputCutter(text);
  let cut = cutter.cut(MAX_TOOL_OUTPUT_CHARS);
  // Each text is counted once: one that fits in characters was counted above, and is its own cut unless over 800 lines.
  if (cut.text !== text) over = tokensOver(cut.text, budget);
  // Shrunk in proportion to the count until it fits: a few rounds, since the head and tail are denser than the average.
  for (let round = 0; round < 4 && budget && over !== undefined; round++) {
    cut = cutter.cut(Math.max(1_000, Math.floor((cut.text.length * budget.maxTokens * 0.95) / over)));
    over = tokensOver(cut.text, budget);
  }
  let where = '';
  let searchable = false;
  try {
    if (spill) {
      where = ` The full output (${text.length} chars) is saved at ${await spill.spill(callId, text)}.`;
      searchable = spill.spilled !== undefined;
    }
  } catch (err) {
    where = ` (Saving the full output failed: ${(err as Error).message}.)`;
  }
  // The spill file is outside the workspace: the file tools cannot open it, so the note names what can reach the cut part.
  const how = searchable
    ? ' To see a part that was cut, call recall with words from it (an error code, a name, a path); or run the tool again on a narrower range.'
    : ' To see a part that was cut, run the tool again on a narrower range.';
  return `${cut.text}\n[Output truncated: ${cut.linesCut} lines / ${cut.charsCut} chars cut.${where}${how}]`;
}

const MAX_LINES = 800;
const HEAD_LINES = 300;
const TAIL_LINES = 300;
/**
 * Longest line an output is cut around whole (and at most a tenth of the budget); with a longer one, it is cut in
 * chunks. Longer lines are code or data (minified, base64) and are not scored: salience reads them poorly, and
 * scoring megabytes of them took seconds.
 */
const MAX_WHOLE_LINE = 1_000;
const CHUNK_CHARS = 400;
/**
 * Outputs longer than this many lines have only their error lines picked out (one pattern a line): the whole model
 * costs a few µs a line, and a 10 MB read (200K lines) held the extension host's thread for 3 s.
 */
const FULLY_SCORED_LINES = 5_000;
/** What baseSalience gives an error line. */
const ERROR_SCORE = 5;

interface Cut {
  text: string;
  /** Lines the text lost (for a cut in chunks, the line breaks in the cut parts): the sum of the markers' counts. */
  linesCut: number;
  /** Characters of the original not in the text (what the markers say, or the cut lines with their line breaks). */
  charsCut: number;
}

/**
 * Head, tail and the salient lines of the middle (errors and failing tests first), within a char budget and 800
 * lines, as pre-trim keeps them. The cuts fall between lines, marked `[… N lines cut …]`; an output with a line too
 * long to keep whole is cut in chunks instead, marked `[… N chars cut …]`. The lines, chunks and scores are worked
 * out once for all the budgets a token count asks for.
 */
class OutputCutter {
  private readonly lines: string[];
  private readonly scores = new Map<string, number>();
  private chunked: { chunks: string[]; scores: number[] } | undefined;

  constructor(private readonly text: string) {
    this.lines = text.split('\n');
  }

  cut(maxChars: number): Cut {
    const { text, lines } = this;
    if (text.length <= maxChars && lines.length <= MAX_LINES) return { text, linesCut: 0, charsCut: 0 };
    const lineMode = lines.length > MAX_LINES;
    const longest = Math.min(MAX_WHOLE_LINE, Math.floor(maxChars / 10));
    if (lineMode || lines.every((l) => l.length <= longest)) {
      const budget = {
        maxSegments: lineMode ? HEAD_LINES + TAIL_LINES + 1 : Number.MAX_SAFE_INTEGER,
        maxChars,
        headSegments: lineMode ? HEAD_LINES : lines.length,
        tailSegments: lineMode ? TAIL_LINES : lines.length,
      };
      const r = selectSegments(lines, '\n', 'lines', budget, (line) => this.score(line));
      // Lines too long for the budget keep nothing whole: chunks of them still show something.
      if (r.segmentsCut < lines.length) return { text: r.text, linesCut: r.segmentsCut, charsCut: r.charsCut };
    }
    return this.cutChunks(maxChars);
  }

  private score(line: string): number {
    if (line.length > MAX_WHOLE_LINE) return 0;
    if (this.lines.length > FULLY_SCORED_LINES) return ERROR_LINE_RE.test(line) ? ERROR_SCORE : 0;
    let n = this.scores.get(line);
    if (n === undefined) this.scores.set(line, (n = baseSalience(line)));
    return n;
  }

  /**
   * The chunk cut: selectSegments chooses by each segment's length and score alone, so it is handed stand-ins of
   * the chunks' lengths that name their chunk, and the text is put together here from the chunks it kept; that way
   * the line breaks in each cut part are known and counted.
   */
  private cutChunks(maxChars: number): Cut {
    const { text } = this;
    const { chunks, scores } = (this.chunked ??= this.chunk());
    // `<i>` padded with spaces: the markers selectSegments writes hold no `<`.
    const standIns = chunks.map((c, i) => `<${i}>`.padEnd(c.length, ' '));
    const score: Salience = (s) => scores[Number(/^<(\d+)>/.exec(s)?.[1] ?? -1)] ?? 0;
    const budget = { maxSegments: Number.MAX_SAFE_INTEGER, maxChars, headSegments: chunks.length, tailSegments: chunks.length };
    const picked = selectSegments(standIns, '', 'chars', budget, score).text;
    const keep = new Set([...picked.matchAll(/<(\d+)>/g)].map((m) => Number(m[1])));
    let out = '';
    let linesCut = 0;
    let charsCut = 0;
    // Chunks are consecutive slices of the text: a cut part is text.slice(runFrom, at).
    let runFrom = -1;
    let at = 0;
    const flush = () => {
      if (runFrom < 0) return;
      out += `\n[… ${at - runFrom} chars cut …]\n`;
      linesCut += countBreaks(text, runFrom, at);
      charsCut += at - runFrom;
      runFrom = -1;
    };
    for (let i = 0; i < chunks.length; at += chunks[i]!.length, i++) {
      if (!keep.has(i)) {
        if (runFrom < 0) runFrom = at;
        continue;
      }
      flush();
      out += chunks[i]!;
    }
    flush();
    return { text: out, linesCut, charsCut };
  }

  /** The text in chunks, each scored as the most salient line it holds part of. */
  private chunk(): { chunks: string[]; scores: number[] } {
    const chunks = chunkText(this.text, CHUNK_CHARS);
    // A stand-in needs room for its name: a short last chunk joins the one before it.
    const short = chunks.length > 1 && chunks[chunks.length - 1]!.length < 16 ? chunks.pop()! : '';
    chunks[chunks.length - 1] += short;
    const scores = new Array<number>(chunks.length).fill(0);
    let k = 0;
    let chunkStart = 0;
    let lineStart = 0;
    for (const line of this.lines) {
      const lineEnd = lineStart + line.length;
      const s = this.score(line);
      if (s > 0) {
        while (chunkStart + chunks[k]!.length <= lineStart) chunkStart += chunks[k++]!.length;
        for (let j = k, from = chunkStart; j < chunks.length && from < lineEnd; from += chunks[j++]!.length) {
          scores[j] = Math.max(scores[j]!, s);
        }
      }
      lineStart = lineEnd + 1;
    }
    return { chunks, scores };
  }
}

function countBreaks(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = s.indexOf('\n', from); i >= 0 && i < to; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** The text's count when it is over the budget, else undefined; texts too short to be over are not counted. */
function tokensOver(text: string, budget: ToolOutputBudget | undefined): number | undefined {
  // A UTF-16 unit counts at most ~2.5 tokens (rare CJK), the calibration a little more: shorter texts cannot be over.
  if (budget === undefined || text.length * 3 <= budget.maxTokens) return undefined;
  const n = budget.count(text);
  return n > budget.maxTokens ? n : undefined;
}
