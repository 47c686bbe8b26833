import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the process's main thread so far, in ms, where Linux tells it
 * (/proc/self/task/PID/schedstat, nanoseconds on the CPU); undefined
 * elsewhere. process.cpuUsage() counts every thread, and during a compaction
 * a large part of that is V8's own helper threads (garbage collection,
 * compilation), which the benchmarks report apart from our JavaScript.
 */
export function mainThreadCpuMs(): number | undefined {
  return threadCpuMsOf(process.pid);
}

/** One thread's CPU ms so far from its schedstat (nanoseconds on the CPU); undefined when it cannot be read. */
function threadCpuMsOf(tid: number | string): number | undefined {
  try {
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    // Not Linux, or the thread ended between listing and reading.
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

/** CPU ms so far of every thread of this process by thread id (Linux only; empty elsewhere). */
export function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    const ms = threadCpuMsOf(tid);
    if (ms !== undefined) out.set(Number(tid), ms);
  }
  return out;
}

/** Per-thread CPU ms between two threadCpuMs() snapshots (threads that started in between count from zero). */
export function threadCpuDelta(before: Map<number, number>, after: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [tid, ms] of after) out.set(tid, ms - (before.get(tid) ?? 0));
  return out;
}
