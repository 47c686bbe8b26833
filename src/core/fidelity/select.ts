import type { Salience } from './salience';

/**
 * Picks which segments (lines, or chunks of an enormous line) of a long text
 * to keep within a budget: the salient ones first, then head and tail from
 * the edges inward. Returns the kept text with a marker for every gap.
 */
export interface SelectBudget {
  /** Segments to keep at most (the line budget of head + tail). */
  maxSegments: number;
  maxChars: number;
  headSegments: number;
  tailSegments: number;
}

export interface Selected {
  text: string;
  segmentsCut: number;
  charsCut: number;
}

export function selectSegments(
  segments: readonly string[],
  joiner: string,
  unit: 'lines' | 'chars',
  budget: SelectBudget,
  salience: Salience,
): Selected {
  const n = segments.length;
  const keep = new Uint8Array(n);
  let kept = 0;
  let chars = 0;
  // Each gap marker costs about this many chars and one segment of the budget.
  const markerCost = 24;
  const fits = (i: number, gaps: number) =>
    kept + 1 + gaps <= budget.maxSegments && chars + segments[i]!.length + joiner.length + markerCost * gaps <= budget.maxChars;
  const take = (i: number) => {
    keep[i] = 1;
    kept++;
    chars += segments[i]!.length + joiner.length;
  };
  // A little of both ends always stays, so the reader sees how the output began and ended.
  const reserve = Math.max(1, Math.floor(budget.maxSegments / 6));
  const minHead = Math.min(budget.headSegments, 5, reserve);
  const minTail = Math.min(budget.tailSegments, 5, reserve);
  // The reserved ends take at most a sixth of the char budget each, so salient lines still fit.
  const endChars = budget.maxChars / 6;
  let minHeadEnd = 0;
  for (let i = 0, c = 0; i < Math.min(minHead, n) && (i === 0 || c + segments[i]!.length <= endChars); i++) {
    if (!fits(i, 1)) break;
    take(i);
    c += segments[i]!.length;
    minHeadEnd = i + 1;
  }
  let minTailStart = n;
  for (let i = n - 1, c = 0; i >= Math.max(minHeadEnd, n - minTail) && (i === n - 1 || c + segments[i]!.length <= endChars); i--) {
    if (!fits(i, 1)) break;
    take(i);
    c += segments[i]!.length;
    minTailStart = i;
  }
  const scored = segments
    .map((s, i) => ({ i, s: keep[i] ? 0 : salience(s) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.i - b.i);
  let gaps = 1;
  for (const { i } of scored) {
    // Keeping an isolated segment can add a gap (two markers where there was one).
    if (fits(i, gaps + 1)) {
      take(i);
      gaps++;
    }
  }
  // Fill head and tail alternately from the edges inward with what budget is left.
  let h = minHeadEnd;
  let t = minTailStart - 1;
  while (h <= t) {
    let progressed = false;
    if (h < budget.headSegments && h <= t) {
      if (!keep[h] && fits(h, gaps)) take(h);
      else if (!keep[h]) break;
      h++;
      progressed = true;
    }
    if (n - 1 - t < budget.tailSegments && h <= t) {
      if (!keep[t] && fits(t, gaps)) take(t);
      else if (!keep[t]) break;
      t--;
      progressed = true;
    }
    if (!progressed) break;
  }
  const out: string[] = [];
  let cutSegs = 0;
  let cutChars = 0;
  let run = 0;
  let runChars = 0;
  const flush = () => {
    if (run === 0) return;
    out.push(unit === 'lines' ? `[… ${run} lines cut …]` : `[… ${runChars} chars cut …]`);
    cutSegs += run;
    cutChars += runChars;
    run = 0;
    runChars = 0;
  };
  for (let i = 0; i < n; i++) {
    if (keep[i]) {
      flush();
      out.push(segments[i]!);
    } else {
      run++;
      runChars += segments[i]!.length + (unit === 'lines' ? 1 : 0);
    }
  }
  flush();
  // Chunks of one line are re-joined without separators; markers stand on their own lines.
  const text = unit === 'lines' ? out.join('\n') : out.map((s) => (s.startsWith('[… ') ? `\n${s}\n` : s)).join('');
  return { text, segmentsCut: cutSegs, charsCut: cutChars };
}

/** Splits text into chunks of about `size` chars, cutting between words so no token is split. */
export function chunkText(text: string, size: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + size);
    if (to < text.length) {
      let k = to;
      while (k > from + size / 2 && /\w/.test(text[k - 1]!) && /\w/.test(text[k]!)) k--;
      if (k > from + size / 2) to = k;
    }
    out.push(text.slice(from, to));
    from = to;
  }
  return out;
}
