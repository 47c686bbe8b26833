import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AGENT_TOOL_SPECS } from '../core/agent/toolSpecs';
import { snapshotSession } from '../core/compaction/fromSession';
import type { CompactionSnapshot } from '../core/compaction/plan';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import { LAYOUTS, VERBOSITIES } from '../core/compaction/prompts';
import type { Layout, Verbosity } from '../core/compaction/prompts';
import { evaluate } from '../core/fidelity/evaluate';
import type { EvalResult, LayoutChoice, VolumeModel } from '../core/fidelity/evaluate';

const LAYOUT_CHOICES: readonly LayoutChoice[] = ['auto', ...LAYOUTS];
const VOLUMES: readonly VolumeModel[] = ['planner', 'per-block'];
import type { HeadFactOptions } from '../core/fidelity/head';
import { plantSession } from '../core/fidelity/plant';
import { renderEvalMarkdown } from '../core/fidelity/report';
import type { Embedder } from '../core/fidelity/stability';
import { elapsedNow, randomIds, systemClock } from '../core/session/storage';
import { STRATEGY_NAMES, splitManual } from '../core/splitPoint';
import type { StrategyName } from '../core/splitPoint';
import { toWire } from '../core/messages';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { UsageError, intOption, oneOf, parseCommandArgs } from './args';
import { ENDPOINT_OPTIONS, connect } from './endpoint';
import type { CliIO } from './io';
import { openSession } from './openSession';
import { cliReplyReserve, cliTargetFraction } from './cliDefaults';

export const EVAL_HELP = `splitpoint eval [--session FILE] [--endpoint URL] [options]

  Measures what survives a compaction: which facts of the head reach a
  worker (reachability), which appear in the summaries (survival, by kind,
  block and position, at several block sizes and verbosities), the loss
  report, stability (CV of the per-block compression ratio, cosine between
  two runs) and QA probes (accuracy with the full and the compacted context).
  Writes eval.json and eval.md to --out and prints the Markdown report.

  --session FILE          a session log or an OpenAI messages array; without it a
                          session with planted facts is generated
  --endpoint URL          OpenAI-compatible base URL; without it the bundled
                          simulator is started (dist/sim.js)
  --model M / --window N  as for "splitpoint compact"
  --concurrency N         requests in flight at once (default 8)
  --strategy S            ${STRATEGY_NAMES.join(' | ')} (default token-fraction; generated sessions
                          split where the planted turns end)
  --split N               split at message N instead
  --block-tokens N        default block size (default: the planner's choice)
  --verbosity V           default verbosity (default detailed)
  --layouts L,L           layouts measured at defaults (default auto,cache-aligned,target-block;
                          auto = the planner's choice)
  --series-layout L       layout of the block-size and verbosity series (default target-block)
  --block-sizes N,N,…     block-size series (default 2048,4096,8192)
  --verbosities V,V,…     verbosity series (default concise,detailed,very detailed)
  --volumes M,M           volume models of the block-size series: planner (one total
                          shared by block size) and per-block (the paper's: each block
                          gets the verbosity's target); default both
  --stability N,N         block sizes compacted twice for stability (default 4096,8192)
  --probes N              QA probes (default 24; 0 to skip)
  --seed N                generated session seed (default 1)
  --head-tokens N         generated head size (default 120000)
  --facts N               planted facts of each kind (default 150)
  --save-session FILE     also write the generated session (messages array) there
  --out DIR               where eval.json and eval.md go (default ./splitpoint-eval)
  --json                  print the JSON instead of the Markdown`;

const OPTIONS = {
  ...ENDPOINT_OPTIONS,
  session: { type: 'string' },
  strategy: { type: 'string' },
  split: { type: 'string' },
  'block-tokens': { type: 'string' },
  verbosity: { type: 'string' },
  layouts: { type: 'string' },
  'series-layout': { type: 'string' },
  'block-sizes': { type: 'string' },
  verbosities: { type: 'string' },
  volumes: { type: 'string' },
  stability: { type: 'string' },
  probes: { type: 'string' },
  seed: { type: 'string' },
  'head-tokens': { type: 'string' },
  facts: { type: 'string' },
  'save-session': { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

function list<T extends string>(value: string | boolean | undefined, allowed: readonly T[], flag: string, fallback: readonly T[]): T[] {
  if (typeof value !== 'string') return [...fallback];
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.find((s) => !allowed.includes(s as T));
  if (bad || items.length === 0) throw new UsageError(`${flag} takes a comma-separated list of ${allowed.join(', ')}; got "${value}"`);
  return items as T[];
}

function ints(value: string | boolean | undefined, flag: string, fallback: readonly number[]): number[] {
  if (typeof value !== 'string') return [...fallback];
  const items = value.split(',').map((s) => Number(s.trim()));
  if (items.length === 0 || items.some((n) => !Number.isInteger(n) || n < 64))
    throw new UsageError(`${flag} takes block sizes of at least 64 tokens, comma-separated; got "${value}"`);
  return items;
}

interface SimModule {
  startSimulator(opts: Record<string, unknown>): Promise<{ url: string; close(): Promise<void> }>;
}

/** The bundled simulator, with room for a 120K-token head and no simulated waiting. */
async function startBundledSim(): Promise<{ url: string; close(): Promise<void> }> {
  const bundled = join(__dirname, 'sim.js');
  if (!existsSync(bundled))
    throw new UsageError(`no --endpoint given and the simulator is not installed here (${bundled} is missing); pass --endpoint URL`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sim = require(bundled) as SimModule;
  return sim.startSimulator({ port: 0, maxModelLen: 262_144, timeScale: 0 });
}

/** The server's /v1/embeddings, if it has one; undefined answers fall back to TF-IDF. */
function embedderFor(baseURL: string, model: string | undefined): Embedder {
  let works = true;
  return async (texts) => {
    if (!works) return undefined;
    const key = process.env.SPLITPOINT_API_KEY;
    const res = await fetch(`${baseURL.replace(/\/+$/, '')}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ input: texts, ...(model ? { model } : {}) }),
    }).catch(() => undefined);
    if (!res || !res.ok) {
      works = false;
      return undefined;
    }
    const body = (await res.json()) as { data?: Array<{ embedding?: number[]; index?: number }> };
    const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return data.length === texts.length && data.every((d) => Array.isArray(d.embedding)) ? data.map((d) => d.embedding!) : undefined;
  };
}

export async function evalCommand(argv: string[], io: CliIO): Promise<number> {
  const started = elapsedNow(systemClock);
  const { values } = parseCommandArgs(argv, OPTIONS);
  const blockTokens =
    values['block-tokens'] === undefined
      ? DEFAULT_COMPACTION_SETTINGS.blockTokens
      : intOption(values['block-tokens'], '--block-tokens', 0, 64);
  const verbosity = oneOf<Verbosity>(values.verbosity, VERBOSITIES, '--verbosity', 'detailed');
  const strategy = oneOf<StrategyName>(values.strategy, STRATEGY_NAMES, '--strategy', 'token-fraction');
  const opts = {
    layouts: list<LayoutChoice>(values.layouts, LAYOUT_CHOICES, '--layouts', LAYOUT_CHOICES),
    volumes: list<VolumeModel>(values.volumes, VOLUMES, '--volumes', VOLUMES),
    seriesLayout: oneOf<Layout>(values['series-layout'], LAYOUTS, '--series-layout', 'target-block'),
    blockSizes: ints(values['block-sizes'], '--block-sizes', [2048, 4096, 8192]),
    verbosities: list<Verbosity>(values.verbosities, VERBOSITIES, '--verbosities', VERBOSITIES),
    stabilityBlockSizes: ints(values.stability, '--stability', [4096, 8192]),
    probes: intOption(values.probes, '--probes', 24, 0),
  };
  const manual = values.split === undefined ? undefined : intOption(values.split, '--split', 0, 0);
  const outDir = resolve(typeof values.out === 'string' ? values.out : 'splitpoint-eval');

  const sim = values.endpoint === undefined ? await startBundledSim() : undefined;
  try {
    const endpointValues = sim ? { ...values, endpoint: sim.url } : values;
    const endpoint = await connect(endpointValues, io);
    const ledger = new TokenLedger(await loadTiktokenCounter());
    let snapshot: CompactionSnapshot;
    let source: string;
    let factOptions: HeadFactOptions | undefined;
    if (typeof values.session === 'string') {
      const { store } = await openSession(values.session, { readOnly: true });
      snapshot = snapshotSession(store, ledger, manual === undefined ? { strategy } : { manualIndex: manual }, AGENT_TOOL_SPECS, {
        contextWindow: endpoint.contextWindow,
        replyReserve: cliReplyReserve(endpoint.contextWindow),
      });
      source = values.session;
      // Capped copies in the active context are checked against the originals the user saw.
      const byId = new Map(store.snapshot.messages.map((m) => [m.id, m]));
      factOptions = { original: (id: string) => byId.get(id) };
    } else {
      const seed = intOption(values.seed, '--seed', 1, 0);
      const headTokens = intOption(values['head-tokens'], '--head-tokens', 120_000, 1000);
      const counter = await loadTiktokenCounter();
      const factsPerKind = intOption(values.facts, '--facts', 150, 1);
      const g = plantSession({ seed, headTokens, factsPerKind, countTokens: (t) => counter.countText(t) });
      if (typeof values['save-session'] === 'string')
        await writeFile(values['save-session'], JSON.stringify(g.messages.map(toWire), null, 1));
      snapshot = {
        context: g.messages,
        tokens: ledger.countAll(g.messages),
        split: splitManual(g.messages, manual ?? g.splitIndex, 'message'),
        priorDepth: 0,
        tools: AGENT_TOOL_SPECS,
        strategy: 'manual',
        pins: g.pins,
      };
      source = `generated with planted facts (seed ${seed}, ${g.planted.length} planted facts, ${g.pins.length} pins)`;
    }
    if (snapshot.split.headIndices.length === 0)
      throw new Error(`Nothing to compact: the split keeps the whole session (${snapshot.split.note}).`);
    const base = {
      ...DEFAULT_COMPACTION_SETTINGS,
      blockTokens,
      verbosity,
      streamWorkers: false,
      contextWindow: endpoint.contextWindow,
      targetFraction: cliTargetFraction(endpoint.contextWindow),
      model: endpoint.model,
    };
    const result: EvalResult = await evaluate(
      snapshot,
      base,
      {
        model: endpoint.client,
        limiter: endpoint.limiter,
        count: (m) => ledger.estimate(m),
        clock: systemClock,
        ids: randomIds,
        embed: embedderFor(endpointValues.endpoint as string, endpoint.model),
        progress: values.json ? undefined : (line) => io.err(line),
      },
      factOptions ? { ...opts, facts: factOptions } : opts,
    );
    const meta = {
      source,
      endpoint: sim ? 'the bundled simulator (splitpoint sim)' : String(values.endpoint),
      model: endpoint.model,
      wallMs: elapsedNow(systemClock) - started,
    };
    const markdown = renderEvalMarkdown(result, meta);
    const json = JSON.stringify({ meta, ...result }, null, 1);
    await mkdir(outDir, { recursive: true });
    await writeFile(join(outDir, 'eval.json'), json);
    await writeFile(join(outDir, 'eval.md'), markdown + '\n');
    io.out(values.json ? json : markdown);
    if (!values.json)
      io.err(`wrote ${join(outDir, 'eval.md')} and eval.json (${((elapsedNow(systemClock) - started) / 1000).toFixed(1)} s)`);
    return 0;
  } finally {
    await sim?.close();
  }
}
