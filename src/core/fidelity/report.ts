import type { EvalResult, RunResult } from './evaluate';
import type { Tally } from './reach';
import { FACT_KINDS, FACT_KIND_LABELS, FACT_POSITIONS } from './types';

/**
 * The readable side of `splitpoint eval`: Markdown with small text bar
 * charts, so it reads the same in a terminal, a pull request or an editor.
 */
const WIDTH = 24;

export function bar(rate: number, width = WIDTH): string {
  const r = Math.max(0, Math.min(1, Number.isFinite(rate) ? rate : 0));
  const full = Math.round(r * width);
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

export const pct = (n: number, d: number): string => (d === 0 ? '–' : `${((100 * n) / d).toFixed(1)}%`);

function tallyRows(rec: Partial<Record<string, Tally>>, order: readonly string[], label: (k: string) => string): string[] {
  return order
    .filter((k) => rec[k] && rec[k]!.total > 0)
    .map((k) => {
      const t = rec[k]!;
      return `${label(k).padEnd(20)} ${bar(t.reached / t.total)} ${pct(t.reached, t.total).padStart(6)}  (${t.reached}/${t.total})`;
    });
}

const code = (lines: string[]) => ['```', ...lines, '```'];

function seriesRows(runs: readonly RunResult[], label: (r: RunResult) => string): string[] {
  return runs.map(
    (r) =>
      `${label(r).padEnd(20)} ${bar(r.survival.rate)} ${pct(r.survival.kept, r.survival.total).padStart(6)}  ` +
      `${String(r.blocks).padStart(3)} blocks, ${String(r.summaryTarget).padStart(6)} asked, ` +
      `${String(r.outputTokens).padStart(6)} out, ratio CV ${r.compression.cv.toFixed(2)}`,
  );
}

/** One character per block: how much of the block's facts survived, in eighths. */
function sparkline(blocks: RunResult['survival']['byBlock']): string {
  const ticks = ' ▁▂▃▄▅▆▇█';
  return blocks.map((b) => (b.total === 0 ? '·' : ticks[Math.round((8 * b.kept) / b.total)]!)).join('');
}

const label = (d: RunResult) => (d.requestedLayout === 'auto' ? `planner's choice (${d.layout})` : d.layout);

export interface ReportMeta {
  source: string;
  endpoint: string;
  model: string | undefined;
  wallMs: number;
}

export function renderEvalMarkdown(r: EvalResult, meta: ReportMeta): string {
  const kindLabel = (k: string) => FACT_KIND_LABELS[k as keyof typeof FACT_KIND_LABELS]?.many ?? k;
  const out: string[] = [];
  out.push(`# What survives compaction — splitpoint eval`, '');
  out.push(`- Session: ${meta.source}`);
  out.push(`- Endpoint: ${meta.endpoint}${meta.model ? ` (model ${meta.model})` : ''}`);
  out.push(`- Head: ${r.head.tokens.toLocaleString('en-US')} tokens in ${r.head.messages} messages, ${r.head.facts} facts`);
  out.push(
    `- Facts by kind: ${FACT_KINDS.filter((k) => r.head.factsByKind[k])
      .map((k) => `${r.head.factsByKind[k]} ${kindLabel(k)}`)
      .join(', ')}`,
  );
  out.push(`- Wall time: ${(meta.wallMs / 1000).toFixed(1)} s`, '');

  out.push('## Reachability (default settings)', '');
  out.push(
    'Facts the engine itself delivers to a worker (after pre-trim, truncation, caps and partition). ' +
      'Anything below 100 % is a defect of the plan, not of the model.',
    '',
  );
  out.push('| layout | blocks | reached | |', '|---|---:|---:|---|');
  for (const d of r.defaults)
    out.push(
      `| ${label(d)} | ${d.blocks} | ${d.reach.reached}/${d.reach.total} (${pct(d.reach.reached, d.reach.total)}) | ` +
        `\`${bar(d.reach.reached / Math.max(1, d.reach.total), 12)}\` |`,
    );
  out.push('');
  for (const d of r.defaults) {
    if (d.reach.reached === d.reach.total) {
      out.push(`Reached by position, ${label(d)}:`, '');
      out.push(...code(tallyRows(d.reach.byPosition, FACT_POSITIONS, (k) => k)), '');
      continue;
    }
    // Below 100 %: say what kind of fact the plan cut, and where it sat.
    out.push(`Reached by kind and by position, ${label(d)}:`, '');
    out.push(
      ...code([...tallyRows(d.reach.byKind, FACT_KINDS, kindLabel), '', ...tallyRows(d.reach.byPosition, FACT_POSITIONS, (k) => k)]),
      '',
    );
  }

  for (const d of r.defaults) {
    out.push(`## Survival: ${label(d)}, B=${d.blockTokens}, ${d.verbosity}`, '');
    out.push(
      `Kept in the summaries (exact key token): **${d.survival.kept} of ${d.survival.total} ` +
        `(${pct(d.survival.kept, d.survival.total)})**; pins ${d.pins.kept} of ${d.pins.total}.`,
      '',
    );
    out.push('By kind:', '', ...code(tallyRows(d.survival.byKind, FACT_KINDS, kindLabel)), '');
    out.push('By position:', '', ...code(tallyRows(d.survival.byPosition, FACT_POSITIONS, (k) => k)), '');
    out.push(
      'By block (one character per block, oldest first; █ = all of its facts kept, ▁ = few, · = no facts):',
      '',
      ...code([sparkline(d.survival.byBlock)]),
      '',
    );
  }

  const layout = r.byVerbosity[0]?.layout ?? r.byBlockSize[0]?.[0]?.layout ?? '';
  for (const series of r.byBlockSize) {
    const first = series[0];
    if (!first) continue;
    out.push(`## Survival by block size (${first.layout}, ${first.verbosity}, ${first.volume} volume)`, '');
    out.push(
      first.volume === 'per-block'
        ? "Each block asks for the verbosity's target, as in the paper: smaller blocks mean more workers and more summary volume, so more survives."
        : 'The planner sets one total summary volume from the verbosity and the room after compaction and shares it out by block size, ' +
            'so block count alone does not add volume; smaller blocks only pay more section overhead.',
      '',
    );
    out.push(...code(seriesRows(series, (x) => `B=${x.blockTokens}`)), '');
  }
  out.push(`## Survival by verbosity (${layout}, B=${r.byVerbosity[0]?.blockTokens ?? ''}, planner volume)`, '');
  out.push(...code(seriesRows(r.byVerbosity, (x) => x.verbosity)), '');

  out.push('## Loss report (what the compaction panel shows before Adopt)', '');
  out.push(`${r.loss.headline} (${r.defaults[0] ? label(r.defaults[0]) : ''} at defaults).`, '');
  const shown = r.loss.facts.slice(0, 15);
  if (shown.length > 0) {
    out.push('| kind | key | message | block | cause |', '|---|---|---|---:|---|');
    for (const f of shown) out.push(`| ${f.kind} | \`${f.key.replace(/\|/g, '\\|')}\` | ${f.messageId} | ${f.block ?? ''} | ${f.cause} |`);
    if (r.loss.facts.length > shown.length) out.push('', `… and ${r.loss.facts.length - shown.length} more in the JSON.`);
    out.push('');
  }

  out.push('## Stability', '');
  out.push(
    'Coefficient of variation of the per-block compression ratio (two runs), and cosine similarity between two runs of the same head.',
    '',
  );
  out.push('| block size | CV run 1 | CV run 2 | cosine (merged) | cosine (per block, mean) | vectors |', '|---:|---:|---:|---:|---:|---|');
  for (const s of r.stability)
    out.push(
      `| ${s.blockTokens} | ${s.cv[0].toFixed(3)} | ${s.cv[1].toFixed(3)} | ${s.cosine.toFixed(4)} | ${s.blockCosineMean.toFixed(4)} | ${s.method} |`,
    );
  out.push('');

  const p = r.probes;
  out.push('## QA probes', '');
  out.push(`${p.asked} questions about sampled facts, each asked after the full context and after the compacted one.`, '');
  out.push(
    ...code([
      `full context       ${bar(p.fullAccuracy)} ${(100 * p.fullAccuracy).toFixed(1)}%`,
      `compacted context  ${bar(p.compactedAccuracy)} ${(100 * p.compactedAccuracy).toFixed(1)}%`,
    ]),
    '',
  );
  out.push(`Difference: ${(100 * p.difference).toFixed(1)} points.`, '');
  return out.join('\n');
}
