/**
 * Client CPU of streamed compactions in the real extension host (issue 12,
 * part 6; target ≤ 2 % of wall): code-server's extension host runs the
 * installed extension with its side bar open, imports the long session and
 * compacts it with `/compact`, seven times per simulator, against simulators
 * with the h100-7b physics at time scale 1, one token per SSE event, each in
 * its own process (test/vscode/suite/clientCpu.bench.ts). CPU is the extension host
 * process's (every thread, other extensions included) over each
 * compaction's wall, planning included. The first run is the first
 * compaction in that extension host.
 *
 * Two servers, the runs taking turns between them: one on 127.0.0.2, which
 * VS Code's proxy support treats as another machine (it swaps the request's
 * agent for its own and resolves a proxy per request, as for a real vLLM
 * server elsewhere), and one on 127.0.0.1, for which it keeps ours.
 * `HIDDEN=1` closes the side bar and listens without counting as a watcher:
 * a compaction nobody watches (src/core/compaction/workerPace.ts).
 * `HIDDEN=alternate` takes turns on each server between watched and hidden
 * runs, and reports each hidden run against the watched one before it, in the
 * same extension host instance.
 * `PROFILE=cpu`, `survivors`, `allocations` or `snapshot` profiles every run after the first in
 * the extension host (test/vscode/suite/v8Hooks.ts) and writes the
 * profiles to .test-output/vscode/; a profiled run's figures are not
 * measurements.
 * `V8_FLAGS='--trace-gc'` sets V8 flags in the extension host before its
 * first run; V8's trace lines, with the runs' boundaries marked among them,
 * go to .test-output/vscode/code-server.log.
 * `COLD=1` flushes the host's compiled code before each run after the
 * first (test/vscode/suite/clientCpu.bench.ts says how and what V8 keeps):
 * the worst a compaction long after the last one could find; the default
 * runs follow each other with the code warm.
 * `SIM_HOSTS=127.0.0.1` (comma-separated) runs only the hosts named; `RUNS=10`
 * runs each server ten times instead of seven (the medians steady as runs are
 * added: one run's figure varies by a point or more on this machine).
 * `IDLE_S=60` idles a minute before each run instead of 8 s (the idle
 * baseline is measured over the whole gap): compactions minutes apart, as a
 * user's are, give V8 idle time to collect between them.
 *
 * Run: npm run bench -- hostCpu   (~6 min; needs the code-server install: node test/vscode/setup.mjs)
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { HostCpuRun } from '../test/vscode/suite/clientCpu.bench';
import { mean, median } from './stats';
import { profileKind } from '../test/vscode/suite/v8Hooks';

/** A run's CPU ms over its idle baseline on the main thread, or on the other threads it lists. */
function overIdle(x: HostCpuRun, main: boolean): number {
  return x.threads.filter((t) => t.main === main).reduce((s, t) => s + t.compactionMs - t.idleMs, 0);
}

async function main(): Promise<void> {
  const lines: string[] = [];
  // Imported, not required: the runner is an ES module with a top-level await (its own command line).
  const { runHostSuite } = await import('../scripts/test-vscode.mjs');
  // Remote hosts (code-server, SSH, WSL) look for new listening ports by default: every few seconds the
  // extension host reads /proc, lists every process's sockets and runs `ps`, which makes the idle baseline
  // noisy. `remote.autoForwardPorts: false` alone did not stop it here; taking the ports from terminal output
  // instead of processes does. Desktop VS Code's local host does not poll; `AUTO_FORWARD=1` keeps the default.
  const settings = process.env.AUTO_FORWARD === '1' ? {} : { 'remote.autoForwardPorts': false, 'remote.autoForwardPortsSource': 'output' };
  // The code-server process, and so the extension host, inherits the environment (test/vscode/harness.mjs).
  process.env.SPLITPOINT_BENCH_SIM_HOSTS = process.env.SIM_HOSTS || '127.0.0.2,127.0.0.1';
  process.env.SPLITPOINT_BENCH_RUNS = process.env.RUNS || '7';
  process.env.SPLITPOINT_BENCH_IDLE_MS = String(Number(process.env.IDLE_S || '8') * 1000);
  process.env.SPLITPOINT_BENCH_PROFILE = PROFILE ?? '';
  if (PROFILE && existsSync(OUT)) for (const f of readdirSync(OUT)) if (f.startsWith('host-run-')) rmSync(join(OUT, f));
  process.env.SPLITPOINT_BENCH_COLD = process.env.COLD ?? '';
  process.env.SPLITPOINT_BENCH_V8_FLAGS = process.env.V8_FLAGS ?? '';
  process.env.SPLITPOINT_BENCH_HIDDEN = process.env.HIDDEN === '1' || process.env.HIDDEN === 'alternate' ? process.env.HIDDEN : '';
  // A run takes about 20 s (its idle baseline, the compaction, settling): the suite's default 10 minutes fit 7 runs on
  // two hosts, not RUNS=20. A minute a run, as the suite's own timeout (test/vscode/suite/clientCpu.bench.ts).
  const runs = Number(process.env.SPLITPOINT_BENCH_RUNS) * process.env.SPLITPOINT_BENCH_SIM_HOSTS.split(',').length;
  const runMinutes = 1 + Number(process.env.SPLITPOINT_BENCH_IDLE_MS) / 60_000;
  const r = await runHostSuite({ suffix: '.bench.ts', log: (l) => lines.push(l), settings, timeoutMs: (5 + runs * runMinutes) * 60_000 });
  if (r.failed > 0 || r.passed === 0) {
    console.error(lines.join('\n'));
    throw new Error(`the host benchmark did not run (${r.passed} passed, ${r.failed} failed)`);
  }
  report(settings, JSON.parse(readFileSync(join(OUT, 'host-cpu.json'), 'utf8')));
}

const OUT = join(__dirname, '..', '.test-output', 'vscode');
/** Checked here, before code-server starts, rather than in the extension host. */
const PROFILE = profileKind(process.env.PROFILE);

const AGENT: Record<string, string> = { '127.0.0.1': "VS Code keeps the transport's agent" };

function report(settings: Record<string, unknown>, out: { node: string; runs: HostCpuRun[] }): void {
  const pct = (x: number) => `${(100 * x).toFixed(2)} %`;
  const rows = out.runs.map(
    (x, i) =>
      `${String(i + 1).padStart(3)}  ${x.simHost.padEnd(11)}${x.layout.padEnd(14)}${String(x.blocks).padStart(6)}${String(x.wallMs).padStart(9)}` +
      `${String(x.cpuMs).padStart(8)}${String(x.mainMs ?? '-').padStart(6)}${pct(x.share).padStart(10)}${pct(x.idleShare).padStart(10)}` +
      `${pct(overIdleShare(x)).padStart(12)}${String(x.messages).padStart(10)}`,
  );
  // The first run is the first compaction in the host (its code not yet compiled): left out of the summaries.
  const hosts = [...new Set(out.runs.map((x) => x.simHost))];
  const mixed = new Set(out.runs.map((x) => x.hidden)).size > 1;
  const groups = mixed
    ? hosts.flatMap((h) => [false, true].map((hidden) => ({ h, hidden })))
    : hosts.map((h) => ({ h, hidden: undefined }));
  const later = (g: { h: string; hidden: boolean | undefined }) =>
    out.runs.slice(1).filter((x) => x.simHost === g.h && (g.hidden === undefined || x.hidden === g.hidden));
  const summary = (xs: HostCpuRun[], f: (x: HostCpuRun) => number) => {
    const ys = xs.map(f);
    return `median ${pct(median(ys))} (${pct(Math.min(...ys))}–${pct(Math.max(...ys))})`;
  };
  const perHost = groups.flatMap((g) => {
    const xs = later(g);
    const how = g.hidden === undefined ? '' : g.hidden ? ', hidden' : ', watched';
    return [
      `${g.h} (${AGENT[g.h] ?? "VS Code's proxy support swaps in its own agent"})${how}, ${xs.length} runs after the first:`,
      `  ${summary(xs, (x) => x.share)} of wall, ${summary(xs, overIdleShare)} over idle; target ≤ 2 %`,
      `  CPU over the idle baseline (busiest 8 threads): main thread median ${median(xs.map((x) => overIdle(x, true)))} ms, ` +
        `the other threads median ${median(xs.map((x) => overIdle(x, false)))} ms`,
      byMajor(xs, pct),
    ];
  });
  console.log(
    [
      `extension host (code-server) CPU during /compact of test/fixtures/long-session.json, streamed workers,`,
      `simulators h100-7b, time scale 1, one token per SSE event, each in its own process, taking turns; extension host node ${out.node};`,
      `settings: ${Object.keys(settings).length ? JSON.stringify(settings) : 'code-server defaults (remote port detection on)'}`,
      mixed
        ? 'HIDDEN=alternate: on each server the runs take turns, side bar open (watched) and closed with nobody watching (hidden)'
        : out.runs[0]?.hidden
          ? 'side bar closed, the bench listening without watching (HIDDEN=1): nobody watches, workers read on the unwatched budget'
          : 'side bar open: the compaction is watched',
      ...(process.env.COLD === '1' ? ["COLD=1: each run after the first starts with the host's compiled code dropped"] : []),
      ...(process.env.V8_FLAGS
        ? [`V8_FLAGS=${process.env.V8_FLAGS}: set in the extension host; its trace is in .test-output/vscode/code-server.log`]
        : []),
      ...(PROFILE
        ? [`PROFILE=${PROFILE}: runs 2 on were profiled (.test-output/vscode/host-run-*); their figures are not measurements`]
        : []),
      'run  server     layout        blocks  wall ms  CPU ms  main   of wall  idle host  compaction  messages',
      ...rows,
      `"main": the extension host's main thread's part of the CPU ms (the rest is V8's and libuv's helper threads);`,
      `"idle host": the same extension host's share over ${Number(process.env.SPLITPOINT_BENCH_IDLE_MS) / 1000} s of idling just before the run; ` +
        `"compaction": the difference`,
      `first compaction in this host: ${pct(out.runs[0]!.share)} of wall, ${pct(overIdleShare(out.runs[0]!))} over idle`,
      ...perHost,
      ...(mixed ? pairs(out.runs, hosts) : []),
      '',
      'busiest threads per run, CPU ms during the compaction (idle baseline scaled to its wall), main thread marked *;',
      'main-thread GC pauses during the compaction by kind (count, ms), the used heap before and after, what was posted to the side bar:',
      ...out.runs.map(
        (x, i) =>
          `${String(i + 1).padStart(3)}  ` +
          x.threads.map((t) => `${t.main ? '*' : ''}${t.tid}: ${t.compactionMs} (${t.idleMs})`).join(', ') +
          `\n     gc ` +
          (Object.entries(x.gc)
            .map(([k, g]) => `${k} ${g.count}, ${g.ms.toFixed(1)} ms`)
            .join('; ') || 'none') +
          (hadMajor(x.idleGc) ? `; idle baseline: major ${x.idleGc.major!.count}, ${x.idleGc.major!.ms.toFixed(1)} ms` : '') +
          `; heap ${x.heapMb.map((m) => m.toFixed(0)).join(' → ')} MB; posted ` +
          Object.entries(x.posted)
            .map(([k, p]) => `${k} ${p.count}× ${(p.bytes / 1024).toFixed(1)} KB`)
            .join(', '),
      ),
    ].join('\n'),
  );
}

/** The run's CPU share over its idle baseline. */
function overIdleShare(x: HostCpuRun): number {
  return x.share - x.idleShare;
}

const hadMajor = (gc: HostCpuRun['gc'] | undefined) => (gc?.major?.count ?? 0) > 0;

/**
 * The runs split by whether a major collection fell in them, and the mean over idle: a major collection of the
 * extension host's whole heap costs far more than the compaction's scavenges, and one falls in some compactions and
 * not in others, so a median over a handful of runs moves with how many of them drew one. A run whose idle baseline
 * had a major collection is left out: its baseline is high, and its figure over idle low for that reason alone.
 */
function byMajor(xs: HostCpuRun[], pct: (x: number) => string): string {
  const fair = xs.filter((x) => !hadMajor(x.idleGc));
  const part = (ys: HostCpuRun[], what: string) =>
    ys.length === 0 ? `none ${what}` : `${ys.length} ${what}, median ${pct(median(ys.map(overIdleShare)))}`;
  const withMajor = fair.filter((x) => hadMajor(x.gc));
  const without = fair.filter((x) => !hadMajor(x.gc));
  const left = xs.length - fair.length;
  return (
    `  over idle: ${part(withMajor, 'with a major collection')}; ${part(without, 'without')}; ` +
    `mean ${pct(mean(fair.map(overIdleShare)))}` +
    (left > 0 ? ` (${left} run${left > 1 ? 's' : ''} left out: a major collection in the idle baseline)` : '')
  );
}

/**
 * Each hidden run against the watched run just before it on the same server: the pair ran in one extension host
 * instance a minute apart, so the difference leaves out what varies between instances.
 */
function pairs(runs: HostCpuRun[], hosts: string[]): string[] {
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)} %`;
  return hosts.flatMap((h) => {
    const xs = runs.slice(1).filter((x) => x.simHost === h);
    const diffs: { share: number; main: number; other: number }[] = [];
    for (let i = 1; i < xs.length; i++) {
      const [w, hd] = [xs[i - 1]!, xs[i]!];
      if (w.hidden || !hd.hidden) continue;
      diffs.push({
        share: overIdleShare(hd) - overIdleShare(w),
        main: overIdle(hd, true) - overIdle(w, true),
        other: overIdle(hd, false) - overIdle(w, false),
      });
    }
    if (diffs.length === 0) return [];
    return [
      `${h}, hidden minus the watched run before it, ${diffs.length} pairs: over idle median ${pct(median(diffs.map((d) => d.share)))} ` +
        `(${diffs.filter((d) => d.share < 0).length} of ${diffs.length} lower), main thread median ${median(diffs.map((d) => d.main))} ms, ` +
        `the other threads median ${median(diffs.map((d) => d.other))} ms`,
    ];
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
