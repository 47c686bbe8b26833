/**
 * Helpers for bench/compaction.bench.ts: sessions of a chosen head size, one
 * compaction run against the in-process simulator measured in SIMULATED time
 * (from the simulator's per-request records), and a live agent decoding
 * alongside.
 */
import { AGENT_TOOL_SPECS } from '../src/core/agent/toolSpecs';
import { createCompaction, snapshotSession } from '../src/core/compaction/fromSession';
import type { CompactionSettings, CompactionSnapshot } from '../src/core/compaction/plan';
import { DEFAULT_COMPACTION_SETTINGS } from '../src/core/compaction/plan';
import type { PlanChoice } from '../src/core/compaction/events';
import type { WorkerEndpoint } from '../src/core/compaction/workerRun';
import { toWire } from '../src/core/messages';
import { frameEnd } from '../src/core/splitPoint';
import { SessionStore } from '../src/core/session/sessionStore';
import { MemoryStorage } from '../src/core/session/memoryStorage';
import { randomIds, systemClock } from '../src/core/session/storage';
import type { TokenLedger } from '../src/core/tokens/tokenLedger';
import { Semaphore, VllmClient } from '../src/llm';
import type { RequestRecord, SimHandle } from '../test/sim';
import { generateSession } from '../test/fixtures/generateSession';

export const WINDOW = 262_144;

/** A generated session whose head (before a manual split) is about `headTokens`, with a tail of about `tailTokens`. */
export async function sessionWithHead(
  ledger: TokenLedger,
  headTokens: number,
  tailTokens: number,
  seed: number,
): Promise<CompactionSnapshot> {
  let chars = (headTokens + tailTokens) * 3;
  for (let attempt = 0; attempt < 12; attempt++) {
    const msgs = generateSession({ seed, targetChars: chars });
    const total = msgs.reduce((s, m) => s + ledger.estimate(m as never), 0);
    if (total >= headTokens + tailTokens) {
      const store = await SessionStore.importArray({ storage: new MemoryStorage() }, `/bench-${seed}.jsonl`, msgs);
      const context = store.active().messages;
      let cum = 0;
      let split = frameEnd(context);
      // Stop at the message boundary nearest the wanted size.
      while (split < context.length) {
        const next = ledger.estimate(context[split]!);
        if (cum + next / 2 > headTokens) break;
        cum += next;
        split++;
      }
      return snapshotSession(store, ledger, { manualIndex: split }, AGENT_TOOL_SPECS, { contextWindow: WINDOW, replyReserve: 4096 });
    }
    chars = Math.ceil((chars * (headTokens + tailTokens)) / Math.max(1, total)) + 20_000;
  }
  throw new Error(`could not generate a session with a ${headTokens}-token head`);
}

export function headTokensOf(snap: CompactionSnapshot): number {
  return snap.split.headIndices.reduce((s, i) => s + snap.tokens[i]!, 0);
}

export interface RunResult {
  name: string;
  choice: PlanChoice;
  predictedMs: number | null;
  /** First arrival to last finish of the compaction's requests, simulated ms. */
  simulatedMs: number;
  /** Output tokens the workers wrote (the simulator's count). */
  summaryTokens: number;
  /** The step model's time for the tokens actually written. */
  predictedForWrittenMs: number | undefined;
  requests: number;
  records: RequestRecord[];
}

const compactionRecords = (sims: readonly SimHandle[]) => sims.flatMap((s) => s.stats.requests.filter((r) => r.kind === 'compaction'));

/**
 * One compaction against the simulator(s), cold cache unless `warm`. The
 * schedulers are paused while the first requests are sent so that they all
 * arrive at one simulated instant: the client's own CPU time (tokenising,
 * JSON) must not leak into simulated time.
 */
export async function runCompaction(
  name: string,
  sims: readonly SimHandle[],
  snap: CompactionSnapshot,
  ledger: TokenLedger,
  over: Partial<CompactionSettings>,
  opts: { warm?: boolean; keepStats?: boolean } = {},
): Promise<RunResult> {
  const clients = sims.map((s) => new VllmClient({ baseURL: s.url }));
  // A live agent keeps the server busy (and its prefix cached): then neither is reset.
  if (!opts.keepStats) for (const s of sims) (s.resetCache(), s.resetStats());
  if (opts.warm && !opts.keepStats)
    await clients[0]!.chat({
      messages: snap.context.map(toWire),
      tools: [...AGENT_TOOL_SPECS],
      toolChoice: 'auto',
      maxTokens: 1,
      stream: false,
    });
  const before = new Set(compactionRecords(sims));
  const settings: CompactionSettings = {
    ...DEFAULT_COMPACTION_SETTINGS,
    contextWindow: WINDOW,
    cache: opts.warm ? 'warm' : 'cold',
    streamWorkers: false,
    ...over,
  };
  const replicas: WorkerEndpoint[] = clients.slice(1).map((c) => ({ model: c, limiter: new Semaphore(256) }));
  const pc = createCompaction(snap, settings, {
    model: clients[0]!,
    limiter: new Semaphore(256),
    count: (m) => ledger.estimate(m),
    clock: systemClock,
    ids: randomIds,
    replicas,
  });
  const first = Math.min(pc.plan.workers.concurrency, pc.plan.blocks.length);
  for (const s of sims) s.pauseScheduler();
  const done = pc.start();
  const arrived = () => compactionRecords(sims).filter((r) => !before.has(r)).length;
  for (let i = 0; i < 6000 && arrived() < first; i++) await new Promise((r) => setTimeout(r, 5));
  for (const s of sims) s.resumeScheduler();
  await done;
  if (!pc.isComplete())
    throw new Error(
      `${name}: ${pc.blocks
        .filter((b) => b.status === 'failed')
        .map((b) => `block ${b.index}: ${b.error}`)
        .join('; ')}`,
    );
  const records = compactionRecords(sims).filter((r) => !before.has(r));
  // Each replica has its own clock; all were resumed at one instant, so the
  // run lasts as long as the longest replica's span on its own clock.
  const spans = sims.map((sim) => {
    const mine = sim.stats.requests.filter((r) => r.kind === 'compaction' && !before.has(r));
    return mine.length === 0 ? 0 : Math.max(...mine.map((r) => r.finished ?? r.arrival)) - Math.min(...mine.map((r) => r.arrival));
  });
  const choice = pc.plan.choice!;
  return {
    name,
    choice,
    predictedMs: choice.chosen.predictedMs,
    simulatedMs: Math.max(...spans),
    summaryTokens: records.reduce((s, r) => s + r.completionTokens, 0),
    predictedForWrittenMs: pc.outcome()?.predictedForWrittenMs,
    requests: records.length,
    records,
  };
}

/** Time per output token of agent requests, simulated ms: mean over requests, each (finished − first token) / (tokens − 1). */
export function tpot(records: readonly RequestRecord[]): number {
  const ok = records.filter((r) => r.status === 'done' && r.firstToken !== undefined && r.finished !== undefined && r.completionTokens > 1);
  if (ok.length === 0) return NaN;
  const tokens = ok.reduce((s, r) => s + r.completionTokens - 1, 0);
  return ok.reduce((s, r) => s + (r.finished! - r.firstToken!), 0) / tokens;
}

export interface AgentMeasure {
  /** Agent time per output token alone, simulated ms (measured on its own request). */
  aloneMs: number;
  /** Agent time per output token while the compaction ran, simulated ms. */
  duringMs: number;
  /** Agent tokens decoded while the compaction ran. */
  tokensDuring: number;
  run: RunResult;
}

/**
 * The live agent's decoding during a compaction. One long agent request (its
 * whole context, cached, as the agent would send it) starts first and outlasts
 * the compaction. Outside the compaction's window it decodes alone, at a step
 * time the profile fixes; so the tokens it decoded inside the window, and its
 * time per output token there, follow from its record exactly.
 */
export async function agentDuring(sim: SimHandle, snap: CompactionSnapshot, compact: () => Promise<RunResult>): Promise<AgentMeasure> {
  const client = new VllmClient({ baseURL: sim.url });
  sim.setScript([{ content: Array.from({ length: 9000 }, (_, i) => `step${i % 97}`).join(' '), repeat: true }]);
  const messages = [...snap.context.map(toWire), { role: 'user' as const, content: 'Carry on with the task.' }];
  const ask = (maxTokens: number) => client.chat({ messages, tools: [...AGENT_TOOL_SPECS], toolChoice: 'auto', maxTokens, stream: false });
  sim.resetCache();
  sim.resetStats();
  await ask(1);
  await ask(200);
  const agentRecords = () => sim.stats.requests.filter((r) => r.kind !== 'compaction');
  const alone = agentRecords().at(-1)!;
  const aloneMs = (alone.finished! - alone.firstToken!) / (alone.completionTokens - 1);
  const n0 = agentRecords().length;
  const long = ask(6000);
  const started = () => agentRecords().length > n0 && agentRecords().at(-1)!.firstToken !== undefined;
  for (let i = 0; i < 4000 && !started(); i++) await new Promise((r) => setTimeout(r, 5));
  const run = await compact();
  await long;
  const rec = agentRecords().at(-1)!;
  const start = Math.min(...run.records.map((r) => r.arrival));
  const end = Math.max(...run.records.map((r) => r.finished!));
  if (rec.firstToken! > start || rec.finished! < end)
    throw new Error('the agent request did not span the compaction; raise its max_tokens');
  const outside = start - rec.firstToken! + (rec.finished! - end);
  const tokensDuring = rec.completionTokens - 1 - outside / aloneMs;
  return { aloneMs, duringMs: (end - start) / tokensDuring, tokensDuring: Math.round(tokensDuring), run };
}
