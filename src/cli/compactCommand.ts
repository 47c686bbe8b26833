import type { CompactionEvent } from '../core/compaction/events';
import { createCompaction, snapshotSession } from '../core/compaction/fromSession';
import type { PendingCompaction } from '../core/compaction/pendingCompaction';
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
import { importToLog } from './importCommand';
import { openSession } from './openSession';
import { intOption, oneOf, parseCommandArgs, requireString } from './args';
import { ENDPOINT_HELP, ENDPOINT_OPTIONS, connect } from './endpoint';
import type { CliIO } from './io';

export const COMPACT_HELP = `splitpoint compact --session FILE --endpoint URL [options]

  Compacts a session against a model server and prints the result. With
  --adopt the compaction is written to the session log; a messages array
  (.json) is first imported into a new log next to it (FILE.jsonl).

${ENDPOINT_HELP}
  --mode parallel|sequential     block-parallel (default) or one worker over the whole head
  --block-tokens N               tokens per block (default 4096)
  --strategy S                   ${STRATEGY_NAMES.join(' | ')} (default token-fraction)
  --split N                      split at message N instead (snapped so no tool result is orphaned)
  --layout L                     ${LAYOUTS.join(' | ')} (default cache-aligned)
  --verbosity V                  concise | detailed | "very detailed" (default detailed)
  --focus TEXT                   what must survive, given to every worker
  --no-stream                    workers do not stream (less client CPU, no token progress)
  --adopt                        write the compaction to the session log
  --json                         print one JSON object`;

const OPTIONS = {
  ...ENDPOINT_OPTIONS,
  session: { type: 'string' },
  mode: { type: 'string' },
  'block-tokens': { type: 'string' },
  strategy: { type: 'string' },
  split: { type: 'string' },
  layout: { type: 'string' },
  verbosity: { type: 'string' },
  focus: { type: 'string' },
  adopt: { type: 'boolean', default: false },
  'no-stream': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;


export async function compactCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const path = requireString(values.session, '--session');
  const mode = oneOf<CompactionMode>(values.mode, ['parallel', 'sequential'], '--mode', 'parallel');
  const layout = oneOf<Layout>(values.layout, LAYOUTS, '--layout', 'cache-aligned');
  const verbosity = oneOf<Verbosity>(values.verbosity, VERBOSITIES, '--verbosity', 'detailed');
  const strategy = oneOf<StrategyName>(values.strategy, STRATEGY_NAMES, '--strategy', 'token-fraction');
  const blockTokens = intOption(values['block-tokens'], '--block-tokens', DEFAULT_COMPACTION_SETTINGS.blockTokens, 64);
  const manual = values.split === undefined ? undefined : intOption(values.split, '--split', 0, 0);
  const opened = await openSession(path);
  const endpoint = await connect(values, io);
  // Adopting needs a log to write to: a messages array is imported into FILE.jsonl first (the .json is left as it was).
  const store = values.adopt && !opened.isLog ? await importToLog(path) : opened.store;
  if (store !== opened.store) io.err(`imported ${path} into ${store.path}; the compaction is adopted there`);
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const snapshot = snapshotSession(store, ledger, manual === undefined ? { strategy } : { manualIndex: manual }, AGENT_TOOL_SPECS, {
    contextWindow: endpoint.contextWindow,
    replyReserve: 4096,
  });
  if (snapshot.split.headIndices.length === 0) throw new Error(`Nothing to compact: the ${snapshot.strategy} split keeps the whole session (${snapshot.split.note}).`);
  const focus = typeof values.focus === 'string' && values.focus.trim() ? values.focus.trim() : store.snapshot.focus ?? undefined;
  const pending = createCompaction(
    snapshot,
    { ...DEFAULT_COMPACTION_SETTINGS, mode, layout, verbosity, blockTokens, focus, streamWorkers: !values['no-stream'], contextWindow: endpoint.contextWindow, model: endpoint.model },
    { model: endpoint.client, limiter: endpoint.limiter, count: (m) => ledger.estimate(m), clock: systemClock, ids: randomIds },
  );
  if (!values.json) pending.on((e) => progress(e, io));
  const abort = () => pending.cancel();
  process.once('SIGINT', abort);
  try {
    await pending.start();
  } finally {
    process.off('SIGINT', abort);
  }
  if (pending.isCancelled) throw new Error('Cancelled; nothing was adopted.');
  if (!pending.isComplete()) {
    const failed = pending.blocks.filter((b) => b.status === 'failed');
    throw new Error(`${failed.length} of ${pending.blocks.length} blocks failed (first: block ${failed[0]?.index}: ${failed[0]?.error}). Nothing was adopted.`);
  }
  const tokensBefore = ledger.total(snapshot.context);
  const tokensAfter = pending.projectedContext().reduce((s, m) => s + ledger.estimate(m), 0);
  if (values.adopt) await pending.adopt(store);
  io.out(values.json ? JSON.stringify(report(pending, tokensBefore, tokensAfter, values.adopt)) : summaryText(pending, tokensBefore, tokensAfter, values.adopt));
  return 0;
}

function report(p: PendingCompaction, tokensBefore: number, tokensAfter: number, adopted: boolean) {
  const t = p.totals();
  return {
    tailStartIndex: p.plan.snapshot.split.tailStartIndex,
    keptIndices: p.plan.snapshot.split.keptIndices,
    strategy: p.plan.snapshot.strategy,
    mode: p.plan.settings.mode,
    layout: p.plan.settings.layout,
    blocks: p.blocks.map((b) => ({
      index: b.index,
      firstMessage: b.firstMessage,
      lastMessage: b.lastMessage,
      inputTokens: b.stats?.inputTokens ?? 0,
      outputTokens: b.stats?.outputTokens ?? 0,
      ms: b.stats?.ms ?? 0,
      cachedTokens: b.stats?.cachedTokens ?? null,
      headTokens: b.tokens,
    })),
    summary: p.summaryText(),
    tokensBefore,
    tokensAfter,
    compressionRatio: Math.round(t.compressionRatio * 100) / 100,
    wallMs: t.wallMs,
    checks: p.checks(),
    adopted,
  };
}

function summaryText(p: PendingCompaction, before: number, after: number, adopted: boolean): string {
  const t = p.totals();
  const c = p.checks();
  return [
    p.summaryText(),
    '',
    `— ${p.blocks.length} block(s), ${t.wallMs} ms; ${before} → ${after} tokens (head ${t.headTokens} → summary ${t.summaryTokens}, ${t.compressionRatio.toFixed(1)}×); cached prompt tokens ${t.cachedTokens} of ${t.inputTokens}`,
    c.missingPins.length > 0 ? `! pins missing from the result: ${c.missingPins.join(', ')}` : '',
    c.openLoopsDropped ? `! open loops: ${c.openLoopsBefore} in the head, ${c.openLoopsAfter} in the summary` : '',
    adopted ? 'Adopted into the session log (undo with the extension, or by appending an undo event).' : 'Not adopted (pass --adopt to write it to a session log).',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

function progress(e: CompactionEvent, io: CliIO): void {
  switch (e.type) {
    case 'planned':
      io.err(`compacting ${e.headTokens} tokens in ${e.blocks.length} block(s) (${e.mode}, ${e.layout})${e.focus ? `, focus: ${e.focus}` : ''}`);
      return;
    case 'block-done':
      io.err(`  block ${e.block}: done, ${e.stats.inputTokens} in (${e.stats.cachedTokens ?? '?'} cached) → ${e.stats.outputTokens} out, ${e.stats.ms} ms`);
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
