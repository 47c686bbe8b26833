import { readFileSync } from 'node:fs';

/**
 * CPU time of the process's main thread so far, in ms, where Linux tells it
 * (/proc/self/task/PID/schedstat, nanoseconds on the CPU); undefined
 * elsewhere. process.cpuUsage() counts every thread, and during a compaction
 * a large part of that is V8's own helper threads (garbage collection,
 * compilation), which the benchmarks report apart from our JavaScript.
 */
export function mainThreadCpuMs(): number | undefined {
  try {
    const ns = Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/** Starts a measurement: the function returned gives the main thread's CPU ms since (undefined where Linux does not tell). */
export function mainThreadCpuSince(): () => number | undefined {
  const start = mainThreadCpuMs();
  return () => {
    const end = mainThreadCpuMs();
    return start !== undefined && end !== undefined ? end - start : undefined;
  };
}
