import type { CompactionEvent, PlanChoice, PlanOption } from '../core/compaction/events';
import { VllmClient, limiterFor } from '../llm';
import { readServerLoads } from '../llm/vllmMetrics';
import { describeLoads } from '../core/perf/serverLoad';
import { resolveProfile } from './profileStore';
import { createCompaction, snapshotSession } from '../core/compaction/fromSession';
import type { PendingCompaction } from '../core/compaction/pendingCompaction';
import { cachedTokensOf, growsText } from '../core/compaction/compactionOutput';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import type { CompactionMode } from '../core/compaction/plan';
import { LAYOUTS, VERBOSITIES } from '../core/compaction/prompts';
import type { Layout, Verbosity } from '../core/compaction/prompts';
import { AGENT_TOOL_SPECS } from '../core/agent/toolSpecs';
import { STRATEGY_NAMES } from '../core/splitPoint';
import type { StrategyName } from '../core/splitPoint';
import { randomIds, systemClock } from '../core/session/storage';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import type { SessionStore } from '../core/session/sessionStore';
import { importToLog } from './importCommand';
import { openSession } from './openSession';
import { intOption, oneOf, parseCommandArgs, requireString } from './args';
import { ENDPOINT_OPTIONS, connect, endpointHelp } from './endpoint';
import type { CliIO } from './io';
import { cliReplyReserve, cliTargetFraction } from './cliDefaults';

export const COMPACT_HELP = `splitpoint compact --session FILE --endpoint URL [options]

  Compacts a session against a model server and prints the result. With
  --adopt the compaction is written to the session log; a messages array
  (.json) is first imported into a new log next to it (FILE.jsonl).

${endpointHelp({ concurrency: false })}
  By default the planner predicts each way to compact (the sequential call,
  cache-aligned and target-block workers at several block sizes and
  concurrencies) on the server's performance profile and runs the fastest;
  the flags below fix parts of the plan.

  --plan                         print the plan and the alternatives with predicted times, and stop
  --mode auto|parallel|sequential  (default auto)
  --block-tokens N               tokens per block (default: the planner's)
  --concurrency N                workers in flight at once (default: the planner's, up to 64)
  --profile NAME|FILE            performance profile: h100-7b, unit, or a JSON file from
                                 bench --calibrate (default: learned for this endpoint, else h100-7b)
  --cache cold|warm              whether the agent's prefix is in the server's cache (default cold)
  --replica URL                  another endpoint serving the same model (repeatable)
  --ignore-load                  plan as if no one else used the servers (default: each server's
                                 running requests and their KV, from its /metrics, are planned around)
  --volume N                     total summary tokens (default: from the verbosity and the window)
  --strategy S                   ${STRATEGY_NAMES.join(' | ')} (default token-fraction)
  --split N                      split at message N instead (snapped so no tool result is orphaned)
  --layout L                     auto | ${LAYOUTS.join(' | ')} (default auto)
  --verbosity V                  concise | detailed | "very detailed" (default detailed)
  --focus TEXT                   what must survive, given to every worker
  --no-stream                    workers do not stream (less client CPU, no token progress)
  --adopt                        write the compaction to the session log; a summary that is not smaller than
                                 what it replaces is refused (exit 1, the log is left as it was)
  --adopt-anyway                 adopt even such a summary (implies --adopt)
  --json                         print one JSON object`;

const OPTIONS = {
  ...ENDPOINT_OPTIONS,
  session: { type: 'string' },
  mode: { type: 'string' },
  'block-tokens': { type: 'string' },
  plan: { type: 'boolean', default: false },
  profile: { type: 'string' },
  cache: { type: 'string' },
  replica: { type: 'string', multiple: true },
  volume: { type: 'string' },
  strategy: { type: 'string' },
  split: { type: 'string' },
  layout: { type: 'string' },
  verbosity: { type: 'string' },
  focus: { type: 'string' },
  adopt: { type: 'boolean', default: false },
  'adopt-anyway': { type: 'boolean', default: false },
  'no-stream': { type: 'boolean', default: false },
  'ignore-load': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

export async function compactCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const path = requireString(values.session, '--session');
  const mode = oneOf<CompactionMode | 'auto'>(values.mode, ['auto', 'parallel', 'sequential'], '--mode', 'auto');
  const layout = oneOf<Layout | 'auto'>(values.layout, ['auto', ...LAYOUTS], '--layout', 'auto');
  const cache = oneOf<'cold' | 'warm'>(values.cache, ['cold', 'warm'], '--cache', 'cold');
  const volume = values.volume === undefined ? undefined : intOption(values.volume, '--volume', 0, 64);
  const verbosity = oneOf<Verbosity>(values.verbosity, VERBOSITIES, '--verbosity', 'detailed');
  const strategy = oneOf<StrategyName>(values.strategy, STRATEGY_NAMES, '--strategy', 'token-fraction');
  const blockTokens = intOption(values['block-tokens'], '--block-tokens', 0, 64);
  const manual = values.split === undefined ? undefined : intOption(values.split, '--split', 0, 0);
  const adopt = values.adopt || values['adopt-anyway'];
  // Only --adopt writes: without it the session is read as it is, and the editor may have it open meanwhile.
  const opened = await openSession(path, { readOnly: !adopt, holder: 'splitpoint compact --adopt' });
  let imported: SessionStore | undefined;
  try {
    const endpoint = await connect(values, io);
    // Adopting needs a log to write to: a messages array is imported into FILE.jsonl first (the .json is left as it was).
    if (adopt && !opened.isLog) imported = await importToLog(path, undefined, undefined, 'compact');
    const store = imported ?? opened.store;
    if (store !== opened.store) io.err(`imported ${path} into ${store.path}; the compaction is adopted there`);
    const ledger = new TokenLedger(await loadTiktokenCounter());
    const snapshot = snapshotSession(store, ledger, manual === undefined ? { strategy } : { manualIndex: manual }, AGENT_TOOL_SPECS, {
      contextWindow: endpoint.contextWindow,
      replyReserve: cliReplyReserve(endpoint.contextWindow),
    });
    if (snapshot.split.headIndices.length === 0)
      throw new Error(`Nothing to compact: the ${snapshot.strategy} split keeps the whole session (${snapshot.split.note}).`);
    const focus = typeof values.focus === 'string' && values.focus.trim() ? values.focus.trim() : (store.snapshot.focus ?? undefined);
    const { profile, from } = resolveProfile(values.profile, endpoint.client.baseURL);
    const concurrency = values.concurrency === undefined ? 0 : endpoint.limiter.max;
    // The planner picks the concurrency unless --concurrency fixed it: let the endpoint's limiter allow it.
    if (values.concurrency === undefined) endpoint.limiter.setMax(64);
    const replicas = (values.replica ?? []).map((url) => ({
      model: new VllmClient({ baseURL: url, ...(endpoint.model ? { model: endpoint.model } : {}) }),
      limiter: limiterFor(url, 64),
    }));
    // Other clients' work on each endpoint, from its /metrics, so the plan and its prediction count on it.
    const roots = [endpoint.client.root, ...replicas.map((r) => r.model.root)];
    const serverLoad = values['ignore-load'] ? undefined : await readServerLoads(roots, () => profile.kvCapacityTokens);
    const pending = createCompaction(
      snapshot,
      {
        ...DEFAULT_COMPACTION_SETTINGS,
        mode,
        layout,
        verbosity,
        blockTokens,
        concurrency,
        maxConcurrency: endpoint.limiter.max,
        profile,
        cache,
        ...(volume ? { summaryTokens: volume } : {}),
        focus,
        streamWorkers: !values['no-stream'],
        contextWindow: endpoint.contextWindow,
        targetFraction: cliTargetFraction(endpoint.contextWindow),
        model: endpoint.model,
        ...(serverLoad ? { serverLoad } : {}),
      },
      { model: endpoint.client, limiter: endpoint.limiter, count: (m) => ledger.estimate(m), clock: systemClock, ids: randomIds, replicas },
    );
    const choice = pending.plan.choice;
    if (values.plan) {
      io.out(
        values.json
          ? JSON.stringify({ plan: choice, profileFrom: from, summaryTokens: pending.plan.summaryTokens })
          : planText(choice, from),
      );
      return 0;
    }
    if (!values.json && choice) io.err(planText(choice, from));
    const printer = new ProgressPrinter(io, roots);
    if (!values.json) pending.on((e) => printer.print(e));
    const abort = () => pending.cancel();
    process.once('SIGINT', abort);
    try {
      await pending.start();
      printer.endRound();
      // As the extension's background run does, a block the server failed (a hiccup past the client's own retries)
      // is tried once more, alone; a refusal or a cut reply would most likely come again, and is not.
      const failed = pending.serverFailures;
      // Every block refused a connection: nothing listens there, and a second round would only say so again (a single
      // hiccup, a 500 or a dropped stream, is still tried once more).
      const down = pending.blocks.every((b) => b.status === 'failed' && (b.error ?? '').includes('(connection refused)'));
      if (failed > 0 && down) io.err(`every block found the server refusing connections: not retried`);
      else if (failed > 0 && !pending.isCancelled) {
        io.err(`retrying ${failed} block(s) the server failed, once`);
        // The line above says which blocks are tried again: no "retry 2" line per block.
        printer.quietRetries = true;
        await pending.retryFailed({ serverOnly: true });
      }
    } finally {
      process.off('SIGINT', abort);
      printer.endRound();
    }
    if (pending.isCancelled) throw new Error('Cancelled; nothing was adopted.');
    if (!pending.isComplete()) {
      const failed = pending.blocks.filter((b) => b.status === 'failed');
      throw new Error(
        `${failed.length} of ${pending.blocks.length} blocks failed (first: block ${failed[0]?.index}: ${failed[0]?.error}). Nothing was adopted.`,
      );
    }
    const tokensBefore = ledger.total(snapshot.context);
    const tokensAfter = pending.projectedContext().reduce((s, m) => s + ledger.estimate(m), 0);
    // As the agent loop does (compactionRunner), a summary no smaller than what it replaces is not adopted unasked.
    const refused = adopt && pending.checks().grows && !values['adopt-anyway'] ? refusalText(pending) : undefined;
    if (adopt && !refused) await pending.adopt(store);
    const adoption: Adoption = refused ? { refused } : adopt ? { into: store.path } : {};
    io.out(
      values.json
        ? JSON.stringify(report(pending, tokensBefore, tokensAfter, adoption))
        : summaryText(pending, tokensBefore, tokensAfter, adoption),
    );
    if (refused) {
      // The import stays (it holds the session as it was): a second run on the .json would find it and stop.
      const where = imported ? `; ${path} was imported into ${store.path}, unchanged: run compact on that log to go on` : '';
      io.err(`splitpoint compact: not adopted: ${refused}${where}`);
      return 1;
    }
    return 0;
  } finally {
    await imported?.close();
    await opened.store.close();
  }
}

/** What became of --adopt: written `into` a log, `refused` (why), or not asked for (neither). */
interface Adoption {
  into?: string;
  refused?: string;
}

/** Why a summary that grows the context is not adopted without --adopt-anyway. */
function refusalText(p: PendingCompaction): string {
  return (
    `${growsText(p)}, so adopting it would grow the context; the session log was left as it was. ` +
    'Try a later split (--split) or larger blocks (--block-tokens), or pass --adopt-anyway to adopt it still.'
  );
}

function report(p: PendingCompaction, tokensBefore: number, tokensAfter: number, adoption: Adoption) {
  const t = p.totals();
  const cached = cachedTokensOf(p.blocks.map((b) => b.stats));
  return {
    tailStartIndex: p.plan.snapshot.split.tailStartIndex,
    keptIndices: p.plan.snapshot.split.keptIndices,
    strategy: p.plan.snapshot.strategy,
    mode: p.plan.settings.mode,
    layout: p.plan.settings.layout,
    blocks: p.blocks.map((b, k) => ({
      index: b.index,
      firstMessage: b.firstMessage,
      lastMessage: b.lastMessage,
      inputTokens: b.stats?.inputTokens ?? 0,
      outputTokens: b.stats?.outputTokens ?? 0,
      ms: b.stats?.ms ?? 0,
      cachedTokens: cached[k] ?? null,
      headTokens: b.tokens,
    })),
    summary: p.summaryText(),
    tokensBefore,
    tokensAfter,
    compressionRatio: Math.round(t.compressionRatio * 100) / 100,
    wallMs: t.wallMs,
    checks: p.checks(),
    adopted: adoption.into !== undefined,
    ...(adoption.refused ? { adoptRefused: adoption.refused } : {}),
    plan: p.plan.choice ?? null,
    outcome: p.outcome() ?? null,
  };
}

function summaryText(p: PendingCompaction, before: number, after: number, adoption: Adoption): string {
  const t = p.totals();
  const c = p.checks();
  return [
    p.summaryText(),
    '',
    `— ${p.blocks.length} block(s), ${t.wallMs} ms; ${before} → ${after} tokens ` +
      `(head ${t.headTokens} → summary ${t.summaryTokens}, ${t.compressionRatio.toFixed(1)}×); ` +
      `cached prompt tokens ${t.cachedTokens ?? 'not reported by the server'} of ${t.inputTokens}`,
    outcomeText(p),
    c.missingPins.length > 0 ? `! pins missing from the result: ${c.missingPins.join(', ')}` : '',
    c.openLoopsDropped ? `! open loops: ${c.openLoopsBefore} in the head, ${c.openLoopsAfter} in the summary` : '',
    c.grows ? `! ${growsText(p)}: adopting it grows the context` : '',
    adoption.refused !== undefined
      ? 'Not adopted: it would grow the context (pass --adopt-anyway to adopt it still).'
      : adoption.into !== undefined
        ? `Adopted into the session log (splitpoint undo --session ${adoption.into} undoes it).`
        : 'Not adopted (pass --adopt to write it to a session log).',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The chosen plan and the alternatives the planner weighed, fastest first. */
export function planText(c: PlanChoice | undefined, from: string): string {
  if (!c) return 'nothing to plan: the head is empty';
  const line = (o: PlanOption) =>
    `  ${o.label.padEnd(44)} ${(o.predictedMs !== null ? sec(o.predictedMs) : '—').padStart(9)}  ${String(o.summaryTokens).padStart(6)} tokens` +
    (o.agentSlowdown !== undefined ? `  agent ×${o.agentSlowdown}` : '') +
    (o.excluded ? `  (ruled out: ${o.excluded})` : '');
  return [
    `plan (profile ${c.profile.name}, ${from}; ${c.cache} cache; ${c.replicas} endpoint${c.replicas > 1 ? 's' : ''}` +
      `${c.forced.length ? `; fixed: ${c.forced.join(', ')}` : ''}${c.serverLoad ? `; ${describeLoads(c.serverLoad)}` : ''}):`,
    line(c.chosen).replace(/^ /, '>'),
    ...c.alternatives.map(line),
  ].join('\n');
}

function outcomeText(p: PendingCompaction): string {
  const o = p.outcome();
  if (!o) return '';
  const written =
    o.predictedForWrittenMs !== undefined
      ? `; for the ${o.summaryTokens} tokens written the model predicts ${sec(o.predictedForWrittenMs)}`
      : '';
  const against =
    o.predictedMs !== null
      ? `predicted ${sec(o.predictedMs)}, measured ${sec(o.measuredMs)} (${o.ratio}× the prediction)`
      : `no prediction, measured ${sec(o.measuredMs)}`;
  return `— plan ${o.label}: ${against}${written}`;
}

/**
 * The progress lines on stderr. A failure that names one of the servers (it could not be reached, it answered with an
 * error) is the server's, not the block's: a server that went away fails every block with the same message, which is
 * printed once and then counted, the count said when the round of workers ends. A reply's own failure (cut off, not a
 * summary) is printed for each block.
 */
class ProgressPrinter {
  /** Set for the CLI's own retry round, which its caller announces in one line. */
  quietRetries = false;
  private readonly printed = new Set<string>();
  private repeats = 0;

  constructor(
    private readonly io: CliIO,
    /** The servers' roots (http://host:port), as their errors name them. */
    private readonly servers: readonly string[],
  ) {}

  print(e: CompactionEvent): void {
    if (e.type === 'block-failed') {
      if (this.printed.has(e.error)) this.repeats++;
      else {
        if (this.servers.some((s) => e.error.includes(s))) this.printed.add(e.error);
        this.io.err(`  block ${e.block}: failed: ${e.error}`);
      }
    } else if (e.type !== 'block-retried' || !this.quietRetries) progress(e, this.io);
  }

  endRound(): void {
    const n = this.repeats;
    const blocks = `block${n === 1 ? '' : 's'}`;
    if (n > 0)
      this.io.err(
        this.quietRetries
          ? `  ${n} ${blocks} failed again with an error printed above`
          : `  ${n} more ${blocks} failed with an error printed above`,
      );
    this.repeats = 0;
  }
}

function progress(e: CompactionEvent, io: CliIO): void {
  switch (e.type) {
    case 'planned':
      io.err(
        `compacting ${e.headTokens} tokens in ${e.blocks.length} block(s) (${e.mode}, ${e.layout})${e.focus ? `, focus: ${e.focus}` : ''}`,
      );
      return;
    case 'block-done':
      io.err(
        `  block ${e.block}: done, ${e.stats.inputTokens} in (${e.stats.cachedTokens ?? '?'} cached) → ${e.stats.outputTokens} out, ${e.stats.ms} ms`,
      );
      return;
    case 'block-failed':
      io.err(`  block ${e.block}: failed: ${e.error}`);
      return;
    case 'block-retried':
      io.err(`  block ${e.block}: retry ${e.attempt}`);
      return;
    case 'block-queued':
    case 'block-streaming':
    case 'block-edited':
    case 'ready':
    case 'cancelled':
    case 'adopted':
      return;
  }
}
