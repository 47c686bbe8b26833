import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { mainThreadCpuMs, mainThreadCpuSince, threadCpuDelta, threadCpuMs } from '../../src/node/threadCpu';

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('main-thread CPU time (benchmarks split it from V8 and worker threads)', () => {
  it('counts work on the main thread, and not work on another thread', async function () {
    if (process.platform !== 'linux') this.skip();
    const p0 = process.cpuUsage();
    const a = mainThreadCpuMs()!;
    spin(80);
    const b = mainThreadCpuMs()!;
    const p = process.cpuUsage(p0);
    const processMs = (p.user + p.system) / 1000;
    // Other threads (a count worker, V8's helpers) may run meanwhile, so the main thread is a part of the
    // process's time, and most of the 80 ms spin unless the machine preempted it heavily.
    assert.ok(b - a >= 40 && b - a <= processMs + 15, `main thread ${b - a} ms of the process's ${processMs} ms`);
    // A worker thread spins for 400 ms while the main thread waits: that CPU is not the main thread's.
    const w = new Worker('const e = performance.now() + 400; while (performance.now() < e); ', { eval: true });
    await new Promise((r) => w.once('exit', r));
    const c = mainThreadCpuMs()!;
    assert.ok(c - b < 200, `the worker's 400 ms showed up as ${c - b} ms on the main thread`);
  });

  it('measures from a start: the spin after it, not the time before', function () {
    if (process.platform !== 'linux') this.skip();
    spin(60);
    const since = mainThreadCpuSince();
    spin(60);
    const ms = since()!;
    assert.ok(ms >= 30 && ms < 110, `${ms} ms for a 60 ms spin after the start`);
  });

  it('per thread: a worker spinning shows on a thread of its own, not on the main thread', async function () {
    if (process.platform !== 'linux') this.skip();
    const t0 = performance.now();
    const before = threadCpuMs();
    assert.ok(before.has(process.pid), 'the main thread is listed');
    const w = new Worker('const e = performance.now() + 600; while (performance.now() < e); ', { eval: true });
    // Measured while the worker still runs: a thread that has ended is no longer listed.
    await new Promise((r) => setTimeout(r, 350));
    const delta = threadCpuDelta(before, threadCpuMs());
    const wall = performance.now() - t0;
    await new Promise((r) => w.once('exit', r));
    const [busiest, ms] = [...delta].filter(([tid]) => tid !== process.pid).sort((a, b) => b[1] - a[1])[0] ?? [0, 0];
    // A thread started in between counts from zero, and cannot have used more CPU than the time that passed.
    assert.ok(ms >= 150 && ms <= wall + 20, `the busiest other thread (${busiest}) used ${ms} ms in ${wall} ms of wall`);
    assert.ok((delta.get(process.pid) ?? 0) < 150, `main thread ${delta.get(process.pid)} ms`);
  });
});
