import { AGENT_TOOL_SPECS } from '../core/agent/toolSpecs';
import { createCompaction, snapshotSession } from '../core/compaction/fromSession';
import type { CompactionSettings } from '../core/compaction/plan';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import { cachedTokensOf } from '../core/compaction/compactionOutput';
import type { Layout } from '../core/compaction/prompts';
import { toWire } from '../core/messages';
import type { ModelPort, ModelRequest } from '../core/ports';
import { STRATEGY_NAMES } from '../core/splitPoint';
import type { StrategyName } from '../core/splitPoint';
import { randomIds, systemClock } from '../core/session/storage';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { intOption, oneOf, parseCommandArgs, requireString, UsageError } from './args';
import { openSession } from './openSession';
import { ENDPOINT_HELP, ENDPOINT_OPTIONS, connect } from './endpoint';
import type { Endpoint } from './endpoint';
import type { CliIO } from './io';
import { readPrefixCacheCounters, resetPrefixCache } from './serverProbe';
import { CALIBRATE_HELP, calibrateCommand } from './calibrateCommand';
import { mainThreadCpuSince } from '../node/threadCpu';
import { forgetCountsAfterNow } from '../core/tokens/memoCounter';
import { cliReplyReserve, cliTargetFraction } from './cliDefaults';

/** The runs bench makes without --runs. */
const DEFAULT_RUN_NAMES = [
  'sequential/cache-aligned/cold',
  'parallel/cache-aligned/cold',
  'parallel/cache-aligned/cold/longest-first',
  'parallel/cache-aligned/warm',
  'parallel/cache-aligned/warm/nostream',
  'parallel/target-block/cold',
  'sequential/target-block/cold',
];

export const BENCH_HELP = `splitpoint bench --session FILE --endpoint URL [options]

  Runs the sequential baseline and parallel block compaction on one endpoint
  and session and prints, per run: wall time, requests, maximum in flight,
  prompt tokens, cached tokens, the prefill ratio (uncached prompt tokens ÷
  head tokens) and the client's CPU time (planning included). Nothing is
  adopted.

${ENDPOINT_HELP}
  --block-tokens N      tokens per block (default 4096)
  --strategy S          ${STRATEGY_NAMES.join(' | ')} (default token-fraction)
  --runs LIST           comma-separated runs; each is
                        MODE/LAYOUT/CACHE[/longest-first][/nostream] with MODE
                        sequential|parallel, LAYOUT cache-aligned|target-block,
                        CACHE cold|warm (default: these ${DEFAULT_RUN_NAMES.length} runs:
                        ${DEFAULT_RUN_NAMES.join(',\n                        ')})
  --json                print one JSON object

${CALIBRATE_HELP}`;

const OPTIONS = {
  ...ENDPOINT_OPTIONS,
  session: { type: 'string' },
  'block-tokens': { type: 'string' },
  strategy: { type: 'string' },
  runs: { type: 'string' },
  json: { type: 'boolean', default: false },
  calibrate: { type: 'boolean', default: false },
  out: { type: 'string' },
  base: { type: 'string' },
} as const;

export interface RunSpec {
  mode: 'sequential' | 'parallel';
  layout: Layout;
  cache: 'cold' | 'warm';
  dispatch: CompactionSettings['dispatch'];
  stream: boolean;
}

export const DEFAULT_RUNS: RunSpec[] = parseRuns(DEFAULT_RUN_NAMES.join(','));

/** MODE/LAYOUT/CACHE followed by optional flags: longest-first, nostream. */
export function parseRuns(text: string): RunSpec[] {
  return text.split(',').map((item) => {
    const [mode, layout, cache, ...flags] = item.trim().split('/');
    const bad = flags.filter((f) => f !== 'longest-first' && f !== 'nostream');
    if (
      (mode !== 'sequential' && mode !== 'parallel') ||
      (layout !== 'cache-aligned' && layout !== 'target-block') ||
      (cache !== 'cold' && cache !== 'warm') ||
      bad.length > 0
    ) {
      throw new UsageError(`bad run "${item}": expected MODE/LAYOUT/CACHE[/longest-first][/nostream], e.g. parallel/cache-aligned/warm`);
    }
    return {
      mode,
      layout,
      cache,
      dispatch: flags.includes('longest-first') ? 'longest-first' : 'all-at-once',
      stream: !flags.includes('nostream'),
    };
  });
}

export interface WorkerRow {
  block: number;
  promptTokens: number;
  cachedTokens: number | undefined;
  uncachedTokens: number | undefined;
  /** Server count of the instruction message alone (warm cache-aligned runs), else the local estimate. */
  instructionTokens: number;
  ms: number;
}

export interface RunResult extends RunSpec {
  name: string;
  blocks: number;
  wallMs: number;
  requests: number;
  maxInFlight: number;
  promptTokens: number;
  /** undefined: the server did not report cached tokens (so neither the uncached part nor the prefill ratio is known). */
  cachedTokens: number | undefined;
  uncachedTokens: number | undefined;
  headTokens: number;
  prefillRatio: number | undefined;
  instructionTokensTotal: number;
  clientCpuMs: number;
  clientCpuShare: number;
  /** The main thread's part of clientCpuMs (Linux only); the rest is V8's and libuv's threads. */
  clientMainThreadCpuMs: number | undefined;
  /** The part of clientCpuMs spent planning (createCompaction: partition, pre-trim scan, plan choice), before any request. */
  clientPlanCpuMs: number;
  cacheResetWorked: boolean;
  serverCacheHits: number | undefined;
  serverCacheQueries: number | undefined;
  workers: WorkerRow[];
  summaryTokens: number;
}

export async function benchCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  if (values.calibrate) return calibrateCommand(values, io);
  const path = requireString(values.session, '--session');
  const blockTokens = intOption(values['block-tokens'], '--block-tokens', 4096, 64);
  const strategy = oneOf<StrategyName>(values.strategy, STRATEGY_NAMES, '--strategy', 'token-fraction');
  const runs = typeof values.runs === 'string' ? parseRuns(values.runs) : DEFAULT_RUNS;
  const endpoint = await connect(values, io);
  const result = await runBench({ path, blockTokens, strategy, runs, endpoint, io, quiet: values.json });
  io.out(values.json ? JSON.stringify(result) : formatBench(result));
  return 0;
}

export interface BenchResult {
  session: string;
  endpoint: string;
  contextWindow: number;
  headTokens: number;
  /** Who counted headTokens: the server's tokenizer, or the local estimate when the server could not tokenize. */
  headCountedBy: 'server' | 'local estimate';
  headMessages: number;
  blockTokens: number;
  runs: RunResult[];
}

export async function runBench(o: {
  path: string;
  blockTokens: number;
  strategy: StrategyName;
  runs: RunSpec[];
  endpoint: Endpoint;
  io: CliIO;
  quiet: boolean;
}): Promise<BenchResult> {
  const counter = await loadTiktokenCounter();
  // The editor counts a session on a worker thread (src/node/backgroundCounter.ts), so its tokenizer memo never
  // holds the session's texts: every run starts from the memo as it was before the session was opened (the
  // counts stay on the messages). Otherwise each run after the first would also find what the last one counted.
  const backToUnopened = forgetCountsAfterNow(counter);
  const { store } = await openSession(o.path, { readOnly: true });
  const ledger = new TokenLedger(counter);
  const { client, limiter, contextWindow, model } = o.endpoint;
  const snapshot = snapshotSession(store, ledger, { strategy: o.strategy }, AGENT_TOOL_SPECS, {
    contextWindow,
    replyReserve: cliReplyReserve(contextWindow),
  });
  const split = snapshot.split;
  if (split.headIndices.length === 0) throw new Error(`Nothing to compact under ${o.strategy}: ${split.note}`);
  // Head size as the server counts it: the agent prefix through the head, less the frame.
  const lastHead = split.headIndices[split.headIndices.length - 1]!;
  const wire = snapshot.context.map(toWire);
  const frameLen = split.headIndices[0]!;
  const [through, frame] = await Promise.all([
    client.tokenize(wire.slice(0, lastHead + 1), { tools: [...AGENT_TOOL_SPECS] }).catch(() => undefined),
    client.tokenize(wire.slice(0, frameLen), { tools: [...AGENT_TOOL_SPECS] }).catch(() => undefined),
  ]);
  const byServer = !!through && !!frame && through.source === 'server' && frame.source === 'server';
  const headTokens = byServer ? through.count - frame.count : split.headIndices.reduce((s, i) => s + snapshot.tokens[i]!, 0);
  const results: RunResult[] = [];
  for (const spec of o.runs) {
    backToUnopened();
    const name = `${spec.mode}/${spec.layout}/${spec.cache}${spec.dispatch === 'longest-first' ? '/longest-first' : ''}${spec.stream ? '' : '/nostream'}`;
    const reset = await resetPrefixCache(client.root);
    if (spec.cache === 'warm') {
      // What the live agent would have sent last: its whole context and tools.
      await client.chat({ messages: wire, tools: [...AGENT_TOOL_SPECS], toolChoice: 'auto', maxTokens: 1, stream: false });
    }
    const settings: CompactionSettings = {
      ...DEFAULT_COMPACTION_SETTINGS,
      mode: spec.mode,
      layout: spec.layout,
      dispatch: spec.dispatch,
      streamWorkers: spec.stream,
      blockTokens: o.blockTokens,
      contextWindow,
      targetFraction: cliTargetFraction(contextWindow),
      model,
    };
    const requests: ModelRequest[] = [];
    const recording: ModelPort = { chat: (req, opts) => (requests.push(req), client.chat(req, opts)) };
    const before = await readPrefixCacheCounters(client.root);
    // Planning is part of the compaction's cost (its pre-trim scan is most of the client's work before the first request).
    const mainCpu = mainThreadCpuSince();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const pending = createCompaction(snapshot, settings, {
      model: recording,
      limiter,
      count: (m) => ledger.estimate(m),
      clock: systemClock,
      ids: randomIds,
    });
    const planCpu = process.cpuUsage(cpu0);
    await pending.start();
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const mainMs = mainCpu();
    const after = await readPrefixCacheCounters(client.root);
    if (!pending.isComplete())
      throw new Error(
        `run ${name}: ${pending.blocks
          .filter((b) => b.status === 'failed')
          .map((b) => `block ${b.index}: ${b.error}`)
          .join('; ')}`,
      );
    const workers: WorkerRow[] = [];
    const cached = cachedTokensOf(pending.blocks.map((b) => b.stats));
    for (const [k, b] of pending.blocks.entries()) {
      const st = b.stats!;
      let instructionTokens = st.instructionTokens;
      if (spec.layout === 'cache-aligned' && spec.cache === 'warm') {
        // Exact instruction size: the worker's prompt minus its prefix, both by the server's tokenizer.
        const req = requests.find(
          (r) => r.messages.length > 0 && /from message #(\d+)/.exec(r.messages.at(-1)!.content ?? '')?.[1] === String(b.firstMessage),
        );
        if (req) {
          const [full, prefix] = await Promise.all([
            client.tokenize(req.messages, { tools: [...AGENT_TOOL_SPECS] }),
            client.tokenize(req.messages.slice(0, -1), { tools: [...AGENT_TOOL_SPECS] }),
          ]);
          if (full.source === 'server') instructionTokens = full.count - prefix.count;
        }
      }
      const cachedTokens = cached[k];
      workers.push({
        block: b.index,
        promptTokens: st.inputTokens,
        cachedTokens,
        uncachedTokens: cachedTokens === undefined ? undefined : st.inputTokens - cachedTokens,
        instructionTokens,
        ms: Math.round(st.ms),
      });
    }
    const t = pending.totals();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const promptTokens = t.inputTokens;
    // Unknown (not 0, and no prefill ratio) when a worker's count stays unknown (see cachedTokensOf).
    const cachedTokens = t.cachedTokens;
    results.push({
      ...spec,
      name,
      blocks: pending.blocks.length,
      wallMs: Math.round(wallMs),
      requests: t.requests,
      maxInFlight: t.maxInFlight,
      promptTokens,
      cachedTokens,
      uncachedTokens: cachedTokens === undefined ? undefined : promptTokens - cachedTokens,
      headTokens,
      prefillRatio: cachedTokens === undefined ? undefined : (promptTokens - cachedTokens) / headTokens,
      instructionTokensTotal: workers.reduce((s, w) => s + w.instructionTokens, 0),
      clientCpuMs: Math.round(cpuMs),
      clientCpuShare: cpuMs / wallMs,
      clientMainThreadCpuMs: mainMs === undefined ? undefined : Math.round(mainMs),
      clientPlanCpuMs: Math.round((planCpu.user + planCpu.system) / 1000),
      cacheResetWorked: reset,
      serverCacheHits: before && after ? after.hits - before.hits : undefined,
      serverCacheQueries: before && after ? after.queries - before.queries : undefined,
      workers,
      summaryTokens: t.summaryTokens,
    });
    if (!o.quiet) o.io.err(`bench: ${name} done in ${Math.round(wallMs)} ms`);
  }
  backToUnopened(); // and leaves the memo as it found it, for a caller that benches again in this process
  return {
    session: o.path,
    endpoint: client.baseURL,
    contextWindow,
    headTokens,
    headCountedBy: byServer ? 'server' : 'local estimate',
    headMessages: split.headIndices.length,
    blockTokens: o.blockTokens,
    runs: results,
  };
}

export function formatBench(r: BenchResult): string {
  const lines = [
    `session ${r.session}: head ${r.headMessages} messages, ${r.headTokens} tokens (${r.headCountedBy === 'server' ? 'server count' : 'local estimate'}); ` +
      `B = ${r.blockTokens}; window ${r.contextWindow}; endpoint ${r.endpoint}`,
    '',
    'run                                       blocks  wall ms  reqs  max in flight  prompt tok  cached tok  uncached  prefill ratio  client CPU',
  ];
  for (const x of r.runs) {
    lines.push(
      `${x.name.padEnd(42)}${String(x.blocks).padStart(6)}${String(x.wallMs).padStart(9)}${String(x.requests).padStart(6)}` +
        `${String(x.maxInFlight).padStart(15)}${String(x.promptTokens).padStart(12)}${String(x.cachedTokens ?? '—').padStart(12)}` +
        `${String(x.uncachedTokens ?? '—').padStart(10)}${(x.prefillRatio?.toFixed(3) ?? '—').padStart(15)}  ` +
        `${x.clientCpuMs} ms (${(100 * x.clientCpuShare).toFixed(2)}%)` +
        (x.cacheResetWorked ? '' : '  [cache not reset]'),
    );
  }
  return lines.join('\n');
}
