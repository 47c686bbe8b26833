/**
 * How often a streamed worker's reply is read. What a worker streams feeds a
 * progress view (each block's band in the timeline, its row, the gauge), not a
 * reader following the words, and every read of every stream costs the client
 * a wake-up of the transport, the HTTP parser and the view's update: about
 * 0.1 ms each in VS Code's extension host on our 2-core test machine, whatever
 * the read brings (bench/results/hostCpu.txt). So reads are budgeted over all
 * of a compaction's streams, not per stream: while someone watches, about 32 a
 * second in all, so that a few workers still update four times a second and
 * 27 of them about once a second; while nobody does (the side bar hidden, no
 * review editor), one every few seconds, enough to keep the progress a view
 * shows on opening close to true. The transport asks again before each batch,
 * so a stream follows the view being shown or hidden while it runs.
 */

/** Reads a second over all of a compaction's worker streams while their progress is watched. */
export const WATCHED_READS_PER_SECOND = 32;
/** Bounds of a watched stream's interval: never more often than four times a second, never less than once. */
export const WATCHED_PACE_MS = { min: 250, max: 1000 } as const;
/** A stream's interval while nobody watches the compaction's progress. */
export const UNWATCHED_PACE_MS = 4000;

/** The interval, in ms, between reads of one worker's stream while `streams` run and the progress is or is not watched. */
export function workerPaceMs(streams: number, watched: boolean): number {
  if (!watched) return UNWATCHED_PACE_MS;
  const share = (1000 * Math.max(1, streams)) / WATCHED_READS_PER_SECOND;
  return Math.round(Math.min(WATCHED_PACE_MS.max, Math.max(WATCHED_PACE_MS.min, share)));
}
