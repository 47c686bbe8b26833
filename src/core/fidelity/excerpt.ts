/** Marks where an excerpt was cut from its line. */
export const CUT = '…';

/** The longest excerpt a fact shows. */
export const EXCERPT_MAX = 200;

/**
 * The part of a line that shows its key, in at most `max` characters: the whole line when it fits, else the sentence
 * that holds the key when that fits, else the words around the key; each cut end is marked with CUT. A line is often a
 * whole paragraph (prose without line breaks), and its first 200 characters need not hold the key at all: shown, the
 * quote did not show what was dropped, and "Keep this" pinned a text without the key.
 */
export function excerptAround(line: string, key: string, max = EXCERPT_MAX): string {
  const text = line.trim();
  if (text.length <= max) return text;
  const found = locate(text, key);
  if (!found) return `${text.slice(0, max - 1).trimEnd()}${CUT}`;
  const at = found.at;
  if (found.length + 2 > max) return marked(text, at, at + max - 2);
  const end = at + found.length;
  const before = text.slice(0, at);
  const sentenceStart = Math.max(before.lastIndexOf('. '), before.lastIndexOf('! '), before.lastIndexOf('? '));
  const start = sentenceStart < 0 ? 0 : sentenceStart + 2;
  const next = /[.!?](?=\s|$)/.exec(text.slice(end));
  const stop = next ? end + next.index + 1 : text.length;
  if (stop - start + (start > 0 ? 1 : 0) + (stop < text.length ? 1 : 0) <= max) return marked(text, start, stop);
  // The words around the key: as much before it as after, a cut moved to the nearest space inside the window.
  const room = max - found.length - 2;
  let from = Math.max(0, at - Math.ceil(room / 2));
  let to = Math.min(text.length, end + (room - (at - from)));
  from = Math.max(0, Math.min(from, to - (max - 2)));
  // A cut moves to a space near it, not to one far off (CJK prose and base64 have few): that would drop the context.
  if (from > 0) {
    const space = text.indexOf(' ', from);
    if (space >= 0 && space < at && space - from <= SNAP) from = space + 1;
  }
  if (to < text.length) {
    const space = text.lastIndexOf(' ', to);
    if (space >= end && to - space <= SNAP) to = space;
  }
  return marked(text, from, to);
}

/** How far a cut may move to fall between words. */
const SNAP = 20;

/**
 * Where the key is in the text: as it is, else ignoring case and the space inside a number's unit (a number fact's
 * key is "250 ms" where the text may say "250ms", as the survival check allows).
 */
function locate(text: string, key: string): { at: number; length: number } | undefined {
  const at = text.indexOf(key);
  if (at >= 0) return { at, length: key.length };
  const m = new RegExp(key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s?'), 'i').exec(text);
  return m ? { at: m.index, length: m[0].length } : undefined;
}

function marked(text: string, from: number, to: number): string {
  return `${from > 0 ? CUT : ''}${text.slice(from, to).trim()}${to < text.length ? CUT : ''}`;
}
