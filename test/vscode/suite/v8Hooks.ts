/**
 * V8 hooks for the host benchmark's runs: dropping the compiled code before a run (COLD=1), and optional profiles
 * (PROFILE= in bench/hostCpu.bench.ts) through the extension host's own inspector session:
 * - 'cpu': a sampled CPU profile of the main thread, 0.5 ms apart;
 * - 'snapshot': a heap snapshot 4 s into the run (what the compaction holds while its workers stream; the snapshot
 *   stops the host for a second or two);
 * - 'survivors': what the run allocated that outlived two young-generation collections, sampled every 8 KB. These
 *   are the bytes promoted to the old generation, which bring the next major collection of the whole extension host
 *   nearer; collected at once, they would cost only a scavenge.
 * - 'allocations': everything the run allocated, sampled every 8 KB, collected or not. The young generation of an
 *   idle extension host is about 1 MB, so every MB allocated costs a scavenge, and what is alive across two is promoted.
 * Profiling costs CPU and allocates: a profiled run's figures are not measurements.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const PROFILE_KINDS = ['cpu', 'survivors', 'allocations', 'snapshot'] as const;
export type ProfileKind = (typeof PROFILE_KINDS)[number];

export function profileKind(value: string | undefined): ProfileKind | undefined {
  if (!value) return undefined;
  const kind = PROFILE_KINDS.find((k) => k === value);
  if (!kind) throw new Error(`PROFILE must be one of ${PROFILE_KINDS.join(', ')}, not ${value}`);
  return kind;
}

/** Starts profiling one run; the function returned stops it and writes the profile into `dir`, named after the run. */
export async function startRunProfile(kind: ProfileKind, dir: string, run: number): Promise<() => Promise<void>> {
  // Made before sampling starts, so that making it is not sampled as a survivor.
  const gc = kind === 'survivors' ? collector() : undefined;
  const s = new Session();
  s.connect();
  if (kind === 'snapshot') {
    const file = join(dir, `host-run-${run}.heapsnapshot`);
    const taken = new Promise<void>((resolve, reject) => setTimeout(() => void snapshotTo(s, file).then(resolve, reject), 4000));
    return async () => {
      await taken;
      s.disconnect();
    };
  }
  if (kind === 'cpu') {
    await s.post('Profiler.enable');
    await s.post('Profiler.setSamplingInterval', { interval: 500 });
    await s.post('Profiler.start');
  } else {
    await s.post('HeapProfiler.enable');
    await s.post('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: kind === 'allocations',
    });
  }
  return async () => {
    if (kind === 'cpu') {
      const { profile } = await s.post('Profiler.stop');
      writeFileSync(join(dir, `host-run-${run}.cpuprofile`), JSON.stringify(profile));
    } else {
      // Two scavenges first: what the run's last moments allocated and would drop young is not a survivor.
      gc?.({ type: 'minor' });
      gc?.({ type: 'minor' });
      const { profile } = await s.post('HeapProfiler.stopSampling');
      writeFileSync(join(dir, `host-run-${run}.${kind}.heapprofile`), JSON.stringify(profile));
    }
    s.disconnect();
  };
}

async function snapshotTo(s: Session, file: string): Promise<void> {
  const chunks: string[] = [];
  const onChunk = (m: { params: { chunk: string } }) => chunks.push(m.params.chunk);
  s.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    await s.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    s.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  }
  writeFileSync(file, chunks.join(''));
}

/**
 * V8 flags set in the extension host before its first run (V8_FLAGS= in bench/hostCpu.bench.ts), such as --trace-gc.
 * V8 prints its trace lines on the host's stdout, which code-server writes to its log
 * (.test-output/vscode/code-server.log); `mark` puts the runs' boundaries among them.
 */
export function setV8Flags(flags: string): void {
  if (!flags) return;
  setFlagsFromString(flags);
  marking = true;
}

let marking = false;

/**
 * With V8 flags set, a line on the host's stderr, past VS Code's console redirection, so that it lands in
 * code-server's log. Stamped with performance.now(), which counts from about when V8's "NNN ms:" does (the process's
 * and the isolate's start): stdout and stderr reach the log through separate pipes, so their order there can slip.
 */
export function mark(line: string): void {
  if (marking) (process as unknown as { _rawDebug(s: string): void })._rawDebug(`@@ ${Math.round(performance.now())} ms: ${line}`);
}

/** Drops the bytecode and optimised code of every function not running now (see COLD in clientCpu.bench.ts). */
export function dropCompiledCode(): void {
  const gc = collector();
  setFlagsFromString('--stress-flush-code');
  try {
    gc({ type: 'major' });
    gc({ type: 'major' });
  } finally {
    setFlagsFromString('--no-stress-flush-code');
  }
}

let exposed: ((o: { type: 'minor' | 'major' }) => void) | undefined;

/** V8's gc(), which the extension host does not expose by default. */
function collector(): (o: { type: 'minor' | 'major' }) => void {
  if (!exposed) {
    setFlagsFromString('--expose-gc');
    exposed = runInNewContext('gc') as (o: { type: 'minor' | 'major' }) => void;
  }
  return exposed;
}
