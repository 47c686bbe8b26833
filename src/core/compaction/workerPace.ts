/**
 * How often a streamed worker's reply is read. What a worker streams feeds a
 * progress view (each block's band in the timeline, its row, the gauge), not a
 * reader following the words, and every read of every stream costs the client
 * a wake-up of the transport, the HTTP parser and the view's update: about
 * 0.1 ms each in VS Code's extension host on our 2-core test machine, whatever
 * the read brings (bench/results/hostCpu.txt). So reads are budgeted over all
 * of a compaction's streams, not per stream: while someone watches, at most 16
 * a second in all (but each stream at least once every 2 s), so that up to
 * four workers still update four times a second, eight twice, sixteen once
 * and 27 of them every 2 s; while nobody does (the side bar hidden, no review
 * editor), at most 8 a second (but each stream at least once every 4 s). In
 * one extension host, compactions nobody watched cost a median 1.07 % of wall
 * less than watched ones at 32 reads a second (bench/results/hostCpu.txt),
 * and closing the side bar while still reading at the watched pace saved
 * nothing: the reads were the watched case's cost, not the view.
 *
 * A worker's end is seen at its next read, so the interval is also how late
 * the last one can be seen. Since the budget is shared, the interval shrinks
 * as workers finish: the last few, which decide when the compaction is done,
 * are read every 250 ms whether or not anyone watches. The transport asks
 * again before each batch, so a stream also follows the view being shown or
 * hidden while it runs.
 *
 * Intervals are doublings of MIN_PACE_MS (250 ms, 500 ms, 1 s, ...), the
 * share rounded up: streams on one interval share the transport's clock, and
 * its ticks (src/llm/pacingClock.ts), so the process wakes once for all of
 * them. Taken exactly, every count of running workers had an interval of its
 * own, and as workers finished the streams spread over as many clocks,
 * waking at unrelated moments. Rounding up keeps the reads within the budget.
 */

/** Reads a second over all of a compaction's worker streams, while watched and while not. */
export const READS_PER_SECOND = { watched: 16, unwatched: 8 } as const;
/** Most often a stream is read (the view's refresh, and the latest a worker's end is seen with few running). */
export const MIN_PACE_MS = 250;
/** Least often a stream is read, while watched and while not. */
export const MAX_PACE_MS = { watched: 2000, unwatched: 4000 } as const;

/** The interval, in ms, between reads of one worker's stream while `streams` run and the progress is or is not watched. */
export function workerPaceMs(streams: number, watched: boolean): number {
  const key = watched ? 'watched' : 'unwatched';
  const share = (1000 * Math.max(1, streams)) / READS_PER_SECOND[key];
  let ms = MIN_PACE_MS;
  while (ms < share && ms < MAX_PACE_MS[key]) ms *= 2;
  return Math.min(ms, MAX_PACE_MS[key]);
}
