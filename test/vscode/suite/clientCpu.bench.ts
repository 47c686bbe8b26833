/**
 * Client CPU of streamed compactions measured in the real extension host
 * (issue 12, part 6), not in a CLI process: the installed extension, its side
 * bar open (so the host builds and posts the webview's deltas), the long
 * session imported, and the user's /compact against a simulator with the
 * h100-7b physics at time scale 1 and one token per SSE event, in its own
 * process so that its CPU is not the host's. Each run: process.cpuUsage() of
 * the extension host (every thread) over the compaction's wall, from the
 * `compact` message to the preview being ready. The first run is the first
 * compaction this extension host performs (its compaction code not yet
 * compiled); the prefix cache is reset before each. Before each run the same
 * host is measured idle for about as long, since VS Code's own services keep
 * working in an extension host: the compaction's cost is the difference.
 *
 * Not part of `npm test`: bench/hostCpu.bench.ts runs it (scripts/test-vscode.mjs
 * bundles `*.bench.ts` only when asked) and prints what it writes.
 */
import * as vscode from 'vscode';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../sim/freePort';
import { mainThreadCpuSince, threadCpuDelta, threadCpuMs } from '../../../src/node/threadCpu';
import { PerformanceObserver, constants as perfConstants, type PerformanceEntry } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CompactionView, HostToWebview } from '../../../src/protocol/messages';
import { getHeapStatistics } from 'node:v8';
import { api, commandWithArg, newSession, PostLog, setSetting, suiteConfig, waitFor } from './api';
import { dropCompiledCode, mark, profileKind, setV8Flags, startRunProfile } from './v8Hooks';

/** Runs per server (bench/hostCpu.bench.ts passes RUNS on). */
const RUNS = Number(process.env.SPLITPOINT_BENCH_RUNS) || 7;
/**
 * Where the simulators listen, one each; the runs take turns between them. VS Code's proxy support treats only
 * `localhost` and 127.0.0.1 as local: for any other host (a vLLM server on another machine; 127.0.0.2 stands in for
 * one here) it replaces the request's agent with its own and resolves a proxy for every request.
 */
const SIM_HOSTS = (process.env.SPLITPOINT_BENCH_SIM_HOSTS || '127.0.0.2,127.0.0.1').split(',');
/** About one compaction's wall on this session. */
const IDLE_MS = Number(process.env.SPLITPOINT_BENCH_IDLE_MS) || 8_000;
/**
 * '1': the side bar closed and the bench's own listener not counted as a watcher: a compaction nobody watches (the
 * background case while the user works elsewhere), whose workers are read on the unwatched budget. 'alternate': each
 * server's runs take turns between watched and hidden, so that the two compare within one extension host instance
 * (between instances V8's young generation alone moves a run's figure as much).
 */
const HIDDEN_MODE = process.env.SPLITPOINT_BENCH_HIDDEN ?? '';
/**
 * Each run after the first starts with the host's compiled code flushed (COLD=1 in bench/hostCpu.bench.ts): V8 drops
 * the bytecode, and with it the optimised code, of a function that has not run for five major collections
 * (--bytecode-old-age), unless the function has baseline (Sparkplug) code. Forced collections never flush, so two run
 * with --stress-flush-code, which flushes whatever V8 may flush and is not running, VS Code's code too: what a
 * compaction long after the last one could find at worst.
 */
const COLD = process.env.SPLITPOINT_BENCH_COLD === '1';
/** Profiles each run after the first (v8Hooks.ts); the bench's figures are then not measurements. */
const PROFILE = profileKind(process.env.SPLITPOINT_BENCH_PROFILE);

/** Whether run r (of `servers` taking turns) is a hidden one. */
function hiddenRun(r: number, servers: number): boolean {
  return HIDDEN_MODE === '1' || (HIDDEN_MODE === 'alternate' && Math.floor(r / servers) % 2 === 1);
}

/** One compaction as the host benchmark writes it (bench/hostCpu.bench.ts reads it). */
export interface HostCpuRun {
  /** The simulator this run compacted against. */
  simHost: string;
  wallMs: number;
  cpuMs: number;
  share: number;
  /** The same host's CPU share while idle just before (its baseline). */
  idleShare: number;
  /** Main-thread GC pauses during the idle baseline, by kind: a major collection there makes the baseline high. */
  idleGc: Record<string, { count: number; ms: number }>;
  /** The extension host's main thread's part of cpuMs (the rest: V8's and libuv's helper threads). */
  mainMs: number | undefined;
  blocks: number;
  layout: string;
  messages: number;
  /** Busiest threads of the process during the compaction, with their CPU over the idle baseline before it. */
  threads: { tid: number; main: boolean; idleMs: number; compactionMs: number }[];
  /** Garbage collection pauses on the main thread during the compaction, by kind. */
  gc: Record<string, { count: number; ms: number }>;
  /** The extension host's used V8 heap before and after the compaction, MB (garbage included). */
  heapMb: [number, number];
  /** What the host posted to the side bar during the compaction, by message type (JSON characters). */
  posted: Record<string, { count: number; bytes: number }>;
  /** The side bar was closed and nobody watched. */
  hidden: boolean;
}

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Starts recording the main thread's GC pauses; the function returned stops and gives them by kind. */
function recordGc(): () => Record<string, { count: number; ms: number }> {
  const out: Record<string, { count: number; ms: number }> = {};
  const add = (entries: readonly PerformanceEntry[]) => {
    for (const e of entries) {
      const kind = GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
      const k = (out[kind] ??= { count: 0, ms: 0 });
      k.count++;
      k.ms += e.duration;
    }
  };
  const obs = new PerformanceObserver((list) => add(list.getEntries()));
  obs.observe({ entryTypes: ['gc'] });
  return () => {
    // Entries are delivered on a later turn: a collection in the run's last turn is still buffered here.
    add(obs.takeRecords());
    obs.disconnect();
    return out;
  };
}

describe('client CPU in the extension host (bench)', function () {
  // About 20 s a run, with room for slow ones (bench/hostCpu.bench.ts gives the suite as long).
  this.timeout((5 + RUNS * SIM_HOSTS.length * (1 + IDLE_MS / 60_000)) * 60_000);

  it('streamed compactions of the long session: CPU share of wall per run', async () => {
    const cfg = suiteConfig();
    const cli = join(cfg.repoRoot, 'dist', 'cli.js');
    const sims: { host: string; root: string; proc: ChildProcess }[] = [];
    try {
      for (const host of SIM_HOSTS) {
        const port = await freePort();
        const args = [
          cli,
          'sim',
          '--port',
          String(port),
          '--max-model-len',
          '131072',
          '--stream-chunk-tokens',
          '1',
          '--quiet',
          '--host',
          host,
        ];
        const root = `http://${host}:${port}`;
        sims.push({ host, root, proc: spawn(process.execPath, args, { stdio: 'ignore' }) });
        const up = () =>
          fetch(`${root}/v1/models`).then(
            (r) => r.ok,
            () => false,
          );
        await waitFor(`the simulator at ${host}`, up, 30_000);
      }
      await setSetting('splitpoint.endpoint', `${sims[0]!.root}/v1`);
      const a = await api();
      await vscode.commands.executeCommand('splitpoint.open');
      await newSession(a);
      await commandWithArg('splitpoint.importSession', vscode.Uri.file(join(cfg.repoRoot, 'test', 'fixtures', 'long-session.json')));
      await waitFor('the imported session', () => a.snapshot().messages.length > 250, 60_000);
      const runs: HostCpuRun[] = [];
      setV8Flags(process.env.SPLITPOINT_BENCH_V8_FLAGS ?? '');
      for (let r = 0; r < RUNS * sims.length; r++) {
        // The servers take turns, so that the machine's drift over the minutes falls on each alike.
        const sim = sims[r % sims.length]!;
        const hidden = hiddenRun(r, sims.length);
        // Set before the idle baseline, so that showing or hiding the view is not counted as the compaction's. Every
        // run shows the view once first, hidden runs too: showing it posts the session's full snapshot, and that
        // garbage, collected during the compaction that follows, would otherwise fall on the watched runs alone.
        if (HIDDEN_MODE) {
          await vscode.commands.executeCommand('workbench.action.closeSidebar');
          await vscode.commands.executeCommand('splitpoint.open');
          await new Promise((resolve) => setTimeout(resolve, 1000));
          if (hidden) await vscode.commands.executeCommand('workbench.action.closeSidebar');
        }
        const endpoint = `${sim.root}/v1`;
        if (a.snapshot().settings.endpoint !== endpoint) {
          await setSetting('splitpoint.endpoint', endpoint);
          await waitFor(
            `the connection to ${sim.host}`,
            () => {
              const s = a.snapshot();
              return s.settings.endpoint === endpoint && s.connection.state === 'ok';
            },
            30_000,
          );
        }
        await fetch(`${sim.root}/reset_prefix_cache`, { method: 'POST' });
        if (COLD && r > 0) dropCompiledCode();
        // The host's own baseline: VS Code keeps working in an extension host (with code-server's defaults its port
        // detection polls /proc and runs `ps` every few seconds), so the same host is measured idle for about as long.
        mark(`run ${r + 1}: idle baseline`);
        const idleThreads0 = threadCpuMs();
        const gcSinceIdle = recordGc();
        const idle0 = process.cpuUsage();
        const i0 = performance.now();
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        const idleGc = gcSinceIdle();
        const idleCpu = process.cpuUsage(idle0);
        const idleWall = performance.now() - i0;
        const idleShare = (idleCpu.user + idleCpu.system) / 1000 / idleWall;
        const idleThreads = threadCpuDelta(idleThreads0, threadCpuMs());
        // Woken by the host's own post, not by polling: a poll every 100 ms would add its wake-ups to the figure.
        // Kept and sized after the compaction, so that sizing them is not counted as its CPU.
        const sent: HostToWebview[] = [];
        let sub: vscode.Disposable | undefined;
        const ready = new Promise<CompactionView>((resolve) => {
          sub = a.onDidPost(
            (m) => {
              sent.push(m);
              if (m.type === 'compaction' && m.compaction?.state === 'ready') resolve(m.compaction);
            },
            { watches: !hidden },
          );
        });
        const stopProfile = PROFILE && r > 0 ? await startRunProfile(PROFILE, dirname(cfg.resultFile), r + 1) : undefined;
        // Outside the measured window, as is the end's mark below.
        mark(`run ${r + 1}: compaction`);
        const heapBefore = getHeapStatistics().used_heap_size;
        const main = mainThreadCpuSince();
        const threads0 = threadCpuMs();
        const gc = recordGc();
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await a.receive({ type: 'compact', focus: null, tailStartIndex: null });
        const c = await ready;
        const wallMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const mainMs = main();
        const gcPauses = gc();
        const threads = threadCpuDelta(threads0, threadCpuMs());
        mark(`run ${r + 1}: end`);
        sub?.dispose();
        const heapAfter = getHeapStatistics().used_heap_size;
        await stopProfile?.();
        const posted: Record<string, { count: number; bytes: number }> = {};
        for (const m of sent) {
          const b = (posted[m.type] ??= { count: 0, bytes: 0 });
          b.count++;
          b.bytes += JSON.stringify(m).length;
        }
        const cpuMs = (cpu.user + cpu.system) / 1000;
        runs.push({
          simHost: sim.host,
          wallMs: Math.round(wallMs),
          cpuMs: Math.round(cpuMs),
          share: cpuMs / wallMs,
          blocks: c.blocks.length,
          layout: c.plan?.chosen.layout ?? '?',
          messages: sent.length,
          idleShare,
          idleGc,
          heapMb: [heapBefore / 2 ** 20, heapAfter / 2 ** 20],
          mainMs: mainMs === undefined ? undefined : Math.round(mainMs),
          threads: [...threads]
            .sort((x, y) => y[1] - x[1])
            .slice(0, 8)
            .map(([tid, ms]) => ({
              tid,
              main: tid === process.pid,
              compactionMs: Math.round(ms),
              // Scaled to the compaction's wall, so that the two columns compare.
              idleMs: Math.round(((idleThreads.get(tid) ?? 0) * wallMs) / idleWall),
            })),
          gc: gcPauses,
          posted,
          hidden,
        });
        const log = new PostLog(a);
        try {
          await a.receive({ type: 'compaction-cancel', compactionId: c.id });
          await log.waitFor('compaction', (m) => m.compaction?.state === 'cancelled', 20_000);
        } finally {
          log.dispose();
        }
      }
      writeFileSync(join(dirname(cfg.resultFile), 'host-cpu.json'), JSON.stringify({ node: process.version, runs }, null, 2));
      for (const run of runs) if (run.blocks < 2) throw new Error(`a run compacted ${run.blocks} block(s): not the parallel path`);
    } finally {
      for (const sim of sims) sim.proc.kill();
    }
  });
});
