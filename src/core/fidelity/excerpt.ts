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
  let at = text.indexOf(key);
  if (at < 0) at = text.toLowerCase().indexOf(key.toLowerCase());
  if (at < 0 || key.length + 2 > max) return `${text.slice(0, max - 1).trimEnd()}${CUT}`;
  const end = at + key.length;
  const before = text.slice(0, at);
  const sentenceStart = Math.max(before.lastIndexOf('. '), before.lastIndexOf('! '), before.lastIndexOf('? '));
  const start = sentenceStart < 0 ? 0 : sentenceStart + 2;
  const next = /[.!?](?=\s|$)/.exec(text.slice(end));
  const stop = next ? end + next.index + 1 : text.length;
  if (stop - start + (start > 0 ? 1 : 0) + (stop < text.length ? 1 : 0) <= max) return marked(text, start, stop);
  // The words around the key: as much before it as after, a cut moved to the nearest space inside the window.
  const room = max - key.length - 2;
  let from = Math.max(0, at - Math.ceil(room / 2));
  let to = Math.min(text.length, end + (room - (at - from)));
  from = Math.max(0, Math.min(from, to - (max - 2)));
  if (from > 0) {
    const space = text.indexOf(' ', from);
    if (space >= 0 && space < at) from = space + 1;
  }
  if (to < text.length) {
    const space = text.lastIndexOf(' ', to);
    if (space >= end) to = space;
  }
  return marked(text, from, to);
}

function marked(text: string, from: number, to: number): string {
  return `${from > 0 ? CUT : ''}${text.slice(from, to).trim()}${to < text.length ? CUT : ''}`;
}
