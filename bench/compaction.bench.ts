/**
 * Compaction benchmark (issue 12): the planner against the simulator's step
 * scheduler on the h100-7b profile, cold cache, in SIMULATED time (each run's
 * first request arrival to its last finish, from the simulator's own request
 * log; the simulator runs in-process at a small time scale, paused while a
 * run's first requests arrive so the client's CPU does not count).
 *
 * Prints, in one run: the sequential call writing 2,048 tokens (the peers'
 * way); the default, planned compaction and its summary volume; sequential
 * vs parallel at matched volume; a 12K-token head; the live agent's time per
 * output token during a background compaction; two replicas; and the
 * planner's prediction against the simulated time of every run.
 *
 * Targets: 117K head default ≤ 0.5 × sequential-2048 while writing ≥ 8,192
 * summary tokens; matched volume ≥ 8× faster; 12K head never slower than
 * sequential at matched volume; prediction within 20 %; agent TPOT during a
 * background compaction ≤ 1.5× of without.
 *
 * Run: npm run bench -- compaction
 */
import type { CompactionSettings, CompactionSnapshot } from '../src/core/compaction/plan';
import { loadTiktokenCounter } from '../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../src/core/tokens/tokenLedger';
import type { SimHandle } from '../test/sim';
import { startReplicas } from '../test/sim';
import type { AgentMeasure, RunResult } from './compactionRuns';
import { WINDOW, agentDuring, headTokensOf, runCompaction, sessionWithHead } from './compactionRuns';

const TIME_SCALE = 0.1;
/** The agent section needs its long request to keep up with the compaction in real time. */
const AGENT_TIME_SCALE = 0.25;

/** A time, or '—' for an option ruled out before it could be simulated. */
const s = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`);
const pct = (r: RunResult) => (100 * ((r.predictedMs ?? NaN) - r.simulatedMs)) / r.simulatedMs;
const pctWritten = (r: RunResult) => (100 * ((r.predictedForWrittenMs ?? NaN) - r.simulatedMs)) / r.simulatedMs;
/** A signed error, or '—' where there is nothing to compare (no prediction). */
const signed = (x: number) => (Number.isNaN(x) ? '—' : `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`);
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

function row(r: RunResult, base?: RunResult): string {
  const c = r.choice.chosen;
  return [
    r.name.padEnd(34),
    c.label.padEnd(40),
    String(r.requests).padStart(4),
    `${r.summaryTokens}/${r.choice.chosen.summaryTokens}`.padStart(11),
    s(r.simulatedMs).padStart(9),
    s(r.predictedMs).padStart(9),
    signed(pct(r)).padStart(8),
    signed(pctWritten(r)).padStart(8),
    base ? `${(r.simulatedMs / base.simulatedMs).toFixed(2)}×`.padStart(7) : '',
  ].join(' ');
}

const HEADER = `${'run'.padEnd(34)} ${'plan'.padEnd(40)} reqs  wrote/asked simulated predicted   error  error²  vs first`;
const LEGEND =
  'wrote/asked: summary tokens the workers wrote / the plan asked for; error: predicted (at the asked volume) vs simulated; ' +
  'error²: the step model replayed with the tokens actually written vs simulated';

function alternatives(r: RunResult, n: number): string[] {
  return [
    `  planner's alternatives for "${r.name}" (predicted; fastest first):`,
    ...r.choice.alternatives
      .slice(0, n)
      .map((a) => `    ${a.label.padEnd(44)} ${s(a.predictedMs).padStart(9)}${a.excluded ? `  (ruled out: ${a.excluded})` : ''}`),
  ];
}

async function section(title: string, sims: SimHandle[], lines: string[], body: () => Promise<void>): Promise<void> {
  lines.push('', `== ${title}`);
  try {
    await body();
  } finally {
    await Promise.all(sims.map((x) => x.close()));
  }
}

async function main(): Promise<void> {
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const big = await sessionWithHead(ledger, 117_000, 30_000, 11);
  // Heads end on turn boundaries: this seed and size give the head nearest 12K tokens (about 11.2K).
  const small = await sessionWithHead(ledger, 11_000, 4_000, 5);
  const runs: RunResult[] = [];
  const out: string[] = [
    `compaction benchmark: profile h100-7b (simulated), cold prefix cache, time scale ${TIME_SCALE}; times are SIMULATED seconds`,
    LEGEND,
    `heads: ${headTokensOf(big)} tokens (${big.split.headIndices.length} messages) and ${headTokensOf(small)} tokens (${small.split.headIndices.length} messages); window ${WINDOW}`,
  ];
  const run = async (name: string, sims: SimHandle[], snap: CompactionSnapshot, over: Partial<CompactionSettings>) => {
    const r = await runCompaction(name, sims, snap, ledger, over);
    runs.push(r);
    process.stderr.write(`bench: ${name}: ${s(r.simulatedMs)} simulated\n`);
    return r;
  };

  const checks: string[] = [];
  let sim = await startReplicas(1, { profile: 'h100-7b', timeScale: TIME_SCALE, maxModelLen: WINDOW });
  await section(`117K-token head`, sim, out, async () => {
    const seq2048 = await run('sequential, 2,048 tokens', sim, big, { mode: 'sequential', summaryTokens: 2048 });
    const planned = await run('default (planned)', sim, big, {});
    const matchedSeq = await run('sequential, matched volume', sim, big, {
      mode: 'sequential',
      summaryTokens: planned.choice.chosen.summaryTokens,
    });
    const oldDefault = await run('cache-aligned 4096, 8 at once', sim, big, {
      mode: 'parallel',
      layout: 'cache-aligned',
      blockTokens: 4096,
      concurrency: 8,
      summaryTokens: planned.choice.chosen.summaryTokens,
    });
    out.push(HEADER, row(seq2048, seq2048), row(planned, seq2048), row(matchedSeq, seq2048), row(oldDefault, seq2048), '');
    out.push(...alternatives(planned, 8));
    const ratio = planned.simulatedMs / seq2048.simulatedMs;
    checks.push(
      `117K default vs sequential-2048: ${ratio.toFixed(2)}× the time (target ≤ 0.5×) with ${planned.summaryTokens} summary tokens (target ≥ 8192) → ${verdict(ratio <= 0.5 && planned.summaryTokens >= 8192)}`,
    );
    const speedup = matchedSeq.simulatedMs / planned.simulatedMs;
    checks.push(
      `117K matched volume (${planned.choice.chosen.summaryTokens} tokens asked; written: parallel ${planned.summaryTokens}, sequential ${matchedSeq.summaryTokens}): parallel ${speedup.toFixed(1)}× faster (target ≥ 8×) → ${verdict(speedup >= 8)}`,
    );
  });

  sim = await startReplicas(1, { profile: 'h100-7b', timeScale: TIME_SCALE, maxModelLen: WINDOW });
  await section(`12K-token head`, sim, out, async () => {
    const planned = await run('12K default (planned)', sim, small, {});
    const matchedSeq = await run('12K sequential, matched volume', sim, small, {
      mode: 'sequential',
      summaryTokens: planned.choice.chosen.summaryTokens,
    });
    out.push(HEADER, row(matchedSeq, matchedSeq), row(planned, matchedSeq), '', ...alternatives(planned, 6));
    const ok = planned.simulatedMs <= matchedSeq.simulatedMs;
    checks.push(
      `12K head: planned ${s(planned.simulatedMs)} vs sequential at matched volume ${s(matchedSeq.simulatedMs)} → ${verdict(ok)} (never slower)`,
    );
  });

  sim = await startReplicas(2, { profile: 'h100-7b', timeScale: TIME_SCALE, maxModelLen: WINDOW });
  await section(`two replicas (target-block workers spread by load; cache-aligned stay on the agent's)`, sim, out, async () => {
    const one = await run('1 replica, default (planned)', [sim[0]!], big, {});
    const two = await run('2 replicas, default (planned)', sim, big, {});
    const perReplica = sim.map((x) => x.stats.requests.filter((r) => r.kind === 'compaction').length);
    out.push(HEADER, row(one, one), row(two, one), `  requests per replica in the 2-replica run: ${perReplica.join(' + ')}`);
  });

  sim = await startReplicas(1, { profile: 'h100-7b', timeScale: AGENT_TIME_SCALE, maxModelLen: WINDOW });
  await section(`live agent on the same server (117K head, agent context cached, time scale ${AGENT_TIME_SCALE})`, sim, out, async () => {
    const measure = async (name: string, over: Partial<CompactionSettings>): Promise<AgentMeasure> => {
      const m = await agentDuring(sim[0]!, big, () =>
        runCompaction(name, sim, big, ledger, { cache: 'warm', ...over }, { keepStats: true }),
      );
      runs.push(m.run);
      process.stderr.write(`bench: ${name}: ${s(m.run.simulatedMs)} simulated\n`);
      return m;
    };
    // Forced, unbounded: cache-aligned workers all at once, each holding its whole prefix while it decodes.
    const free = await measure('agent running, cache-aligned forced', {
      background: { maxSlowdown: 100 },
      layout: 'cache-aligned',
      blockTokens: 4096,
      concurrency: 256,
    });
    const bounded = await measure('agent running, background ≤ 1.5×', { background: { maxSlowdown: 1.5 } });
    out.push(HEADER, row(free.run), row(bounded.run), '');
    for (const m of [free, bounded]) {
      out.push(
        `  ${m.run.name}: agent TPOT ${m.duringMs.toFixed(2)} ms during (${m.tokensDuring} tokens) vs ${m.aloneMs.toFixed(2)} ms alone = ${(m.duringMs / m.aloneMs).toFixed(2)}× (predicted ${m.run.choice.chosen.agentSlowdown}×)`,
      );
    }
    const r = bounded.duringMs / bounded.aloneMs;
    checks.push(`agent TPOT during a background compaction: ${r.toFixed(2)}× of without (target ≤ 1.5×) → ${verdict(r <= 1.5)}`);
  });

  const worst = runs.reduce((w, r) => (Math.abs(pct(r)) > Math.abs(pct(w)) ? r : w));
  checks.push(
    `prediction: worst error ${signed(pct(worst))} (${worst.name}) over ${runs.length} runs (target within 20 %) → ${verdict(runs.every((r) => Math.abs(pct(r)) <= 20))}`,
  );
  const worstW = runs.reduce((w, r) => (Math.abs(pctWritten(r)) > Math.abs(pctWritten(w)) ? r : w));
  checks.push(`  the step model with the tokens actually written: worst error ${signed(pctWritten(worstW))} (${worstW.name})`);
  out.push('', '== targets', ...checks);
  console.log(out.join('\n'));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
