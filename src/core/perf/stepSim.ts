/**
 * A discrete model of a vLLM-v1-style scheduler, used by the planner to
 * predict a compaction's wall time. Each step: running sequences first
 * (one decode token each, then the next chunks of prefills), then waiting ones
 * are admitted in arrival order while seats and the step's token budget last;
 * the step costs what `stepTimeMs` says (the calibration's mixed-step
 * formula). Prefix-cache hits follow v1: a request's blocks are registered
 * when it is admitted, so one admitted later reuses the shared prefix as far
 * as any earlier one reached. The client side releases requests in a given
 * order, at most `concurrency` in flight, each to the least loaded replica it
 * may use.
 */
import type { PerfProfile } from './profile';
import { mixedStepMs, prefillPairs, stepTimeMs } from './profile';
import { otherSequences, type ServerLoad } from './serverLoad';

const CACHE_BLOCK = 16;

export interface SimRequest {
  promptTokens: number;
  /** Leading prompt tokens shared with the agent's context (cache-aligned replay); 0 when none. */
  sharedTokens: number;
  outputTokens: number;
  /** Pinned to one replica (cache-aligned workers stay where the agent's prefix is); undefined = any, by load. */
  replica?: number;
}

export interface SimOptions {
  profile: PerfProfile;
  /** Request indices in the order the client sends them. */
  order: readonly number[];
  /** Most requests in flight at once, over all replicas. */
  concurrency: number;
  replicas: number;
  /** Shared-prefix tokens already cached on replica 0 when the run starts (the agent's context when warm). */
  warmSharedTokens: number;
  /** A live agent decoding on replica 0 for the whole run, holding this many KV tokens. */
  agentKvTokens?: number;
  /** Other clients' sequences on each replica (by index), decoding for the whole run. */
  load?: readonly (ServerLoad | undefined)[];
}

export interface SimResult {
  wallMs: number;
  finishMs: number[];
  firstTokenMs: number[];
  steps: number;
  /** Mean step time on replica 0 while the run lasted (the agent's time per output token), and without the run. */
  agentTpotMs?: number;
  agentAloneTpotMs?: number;
}

interface Seq {
  id: number;
  req: SimRequest;
  held: number;
  prefillLeft: number;
  generated: number;
}

/**
 * A replica's planned step. One per replica, reused from step to step (a step is applied before its replica plans
 * the next): the planner simulates thousands of steps per compaction, and fresh arrays per step were most of what
 * it allocated. Entries past `chunks`/`decoders` are stale.
 */
interface Step {
  pending: boolean;
  end: number;
  chunkSeqs: Seq[];
  chunkTokens: number[];
  chunks: number;
  decoderSeqs: Seq[];
  decoders: number;
  repeat: number;
}

interface Replica {
  waiting: Seq[];
  running: Seq[];
  /** Longest shared prefix registered in this replica's cache. */
  frontier: number;
  clock: number;
  step: Step;
  inFlight: number;
  /**
   * Other clients' sequences: seats taken and a decode token each per step, and the KV they hold, held steady
   * (serverLoad.ts: theirs end and others start). Counted, not simulated one by one: a step costs the same whether
   * they are 2 or 200.
   */
  others: number;
  othersKv: number;
}

/** The id of the live agent's sequence, which runs for the whole run. */
const AGENT = -1;

export function simulateSteps(requests: readonly SimRequest[], o: SimOptions): SimResult {
  return new StepRun(requests, o).run();
}

/**
 * One simulation's state, with the scheduler's moves as methods rather than closures made per call: the planner runs
 * the model for every candidate of every compaction, and V8 threw away the optimised code of per-call closures with
 * the closures, so every compaction compiled them again (about 25 ms of TurboFan a compaction in a CLI trace).
 */
class StepRun {
  private readonly p: PerfProfile;
  private readonly replicas: Replica[];
  private readonly finishMs: number[];
  private readonly firstTokenMs: number[];
  private readonly queue: number[];
  private inFlight = 0;
  private done = 0;
  private steps = 0;
  private agentSteps = 0;
  private agentMs = 0;
  private now = 0;

  constructor(
    private readonly requests: readonly SimRequest[],
    private readonly o: SimOptions,
  ) {
    this.p = o.profile;
    this.replicas = Array.from({ length: Math.max(1, o.replicas) }, (_, i) => ({
      waiting: [],
      running: [],
      frontier: i === 0 ? o.warmSharedTokens : 0,
      clock: 0,
      step: { pending: false, end: 0, chunkSeqs: [], chunkTokens: [], chunks: 0, decoderSeqs: [], decoders: 0, repeat: 1 },
      inFlight: 0,
      others: 0,
      othersKv: 0,
    }));
    this.finishMs = requests.map(() => 0);
    this.firstTokenMs = requests.map(() => 0);
    this.queue = [...o.order];
    if (o.agentKvTokens !== undefined) {
      const agent: Seq = {
        id: AGENT,
        req: { promptTokens: o.agentKvTokens, sharedTokens: 0, outputTokens: Infinity },
        held: o.agentKvTokens,
        prefillLeft: 0,
        generated: 0,
      };
      this.replicas[0]!.running.push(agent);
      this.replicas[0]!.inFlight++;
    }
    // Other clients' sequences take seats and decode tokens but are not the client's in flight: it places its
    // workers by its own requests alone (src/core/compaction/pendingCompaction.ts), and so does this model.
    o.load?.forEach((l, r) => {
      const rep = this.replicas[r];
      const n = otherSequences(l);
      if (!rep || !l || n <= 0) return;
      // They never end here, so they may not take every seat: the workers would wait for ever. On the server they
      // do end and a seat comes free; the model keeps one free from the start instead.
      rep.others = Math.min(n, Math.max(0, this.p.maxNumSeqs - 1 - rep.running.length));
      // Queued ones hold no KV yet; once admitted, as much as the running ones do on average, within the cache:
      // requests often queue because it is full (a reading above the profile's capacity is the server's, kept).
      const kv = l.sequences > 0 ? Math.max(0, Math.round((l.kvTokens * rep.others) / l.sequences)) : 0;
      rep.othersKv = Math.min(kv, Math.max(l.kvTokens, this.p.kvCapacityTokens));
    });
  }

  run(): SimResult {
    const { replicas, requests, o } = this;
    this.release();
    while (this.done < requests.length) {
      // Indexed, as in plan(): a for-of here allocated an iterator per step while the model was not yet optimised.
      for (let i = 0; i < replicas.length; i++) {
        const rep = replicas[i]!;
        // Only replicas holding the client's requests (the agent's included) are stepped: one with other clients'
        // sequences alone would step a token at a time for the whole run, and nothing here reads its time.
        if (!rep.step.pending && rep.inFlight > 0) this.plan(rep);
      }
      let next: Replica | undefined;
      for (let i = 0; i < replicas.length; i++) {
        const rep = replicas[i]!;
        if (rep.step.pending && (!next || rep.step.end < next.step.end)) next = rep;
      }
      if (!next) throw new Error('step model stalled: requests left but nothing can run (a prompt larger than the KV budget?)');
      this.apply(next, next === replicas[0]);
      this.release();
    }
    const wallMs = Math.max(0, ...this.finishMs);
    const res: SimResult = { wallMs, finishMs: this.finishMs, firstTokenMs: this.firstTokenMs, steps: this.steps };
    if (o.agentKvTokens !== undefined) {
      // Without the compaction the agent still shares its steps with the other clients' sequences.
      const zero = this.replicas[0]!;
      res.agentAloneTpotMs = stepTimeMs(this.p, {
        prefill: [],
        decodeKvTokens: o.agentKvTokens + zero.othersKv,
        decodeSeqs: 1 + zero.others,
      });
      res.agentTpotMs = this.agentSteps > 0 ? this.agentMs / this.agentSteps : res.agentAloneTpotMs;
    }
    return res;
  }

  private release(): void {
    const { queue, o } = this;
    while (queue.length > 0 && this.inFlight < o.concurrency) {
      const id = queue.shift()!;
      const req = this.requests[id]!;
      const r = req.replica ?? leastLoaded(this.replicas);
      const rep = this.replicas[r]!;
      rep.waiting.push({ id, req, held: 0, prefillLeft: 0, generated: 0 });
      rep.inFlight++;
      this.inFlight++;
      if (!rep.step.pending) rep.clock = Math.max(rep.clock, this.now);
    }
  }

  // The planner runs this for every candidate once per compaction, mostly before V8 optimises it: indexed loops,
  // since a for-of there allocates an iterator result per element, and a chunk is added in place twice (a closure
  // over the step's sums made the model 2.4 times slower).
  private plan(rep: Replica): void {
    const p = this.p;
    let budget = p.maxNumBatchedTokens - rep.others;
    const st = rep.step;
    let chunks = 0;
    let decoders = 0;
    let prefillTokens = 0;
    let pairs = 0;
    const running = rep.running;
    // As vLLM v1: decode tokens first, then the running prefills' next chunks, then admissions.
    for (let i = 0; i < running.length && budget > 0; i++) {
      if (running[i]!.prefillLeft > 0) continue;
      st.decoderSeqs[decoders++] = running[i]!;
      budget -= 1;
    }
    for (let i = 0; i < running.length && budget > 0; i++) {
      const s = running[i]!;
      if (s.prefillLeft === 0) continue;
      const n = Math.min(s.prefillLeft, budget);
      st.chunkSeqs[chunks] = s;
      st.chunkTokens[chunks++] = n;
      prefillTokens += n;
      pairs += prefillPairs(n, s.held);
      budget -= n;
    }
    while (rep.waiting.length > 0 && running.length + rep.others < p.maxNumSeqs && budget > 0) {
      const s = rep.waiting.shift()!;
      const shared = Math.min(rep.frontier, s.req.sharedTokens, s.req.promptTokens - 1);
      s.held = Math.max(0, Math.floor(shared / CACHE_BLOCK) * CACHE_BLOCK);
      s.prefillLeft = s.req.promptTokens - s.held;
      rep.frontier = Math.max(rep.frontier, s.req.sharedTokens);
      running.push(s);
      const n = Math.min(s.prefillLeft, budget);
      st.chunkSeqs[chunks] = s;
      st.chunkTokens[chunks++] = n;
      prefillTokens += n;
      pairs += prefillPairs(n, s.held);
      budget -= n;
    }
    // Decode-only stretches are identical but for the KV growing by one token
    // per sequence per step: run them in one go until the first one ends, as
    // long as nothing can arrive meanwhile.
    let repeat = 1;
    const quiet = chunks === 0 && rep.waiting.length === 0 && (this.o.replicas <= 1 || this.queue.length === 0);
    let kv0 = rep.othersKv;
    let fewestLeft = Infinity;
    for (let i = 0; i < decoders; i++) {
      const s = st.decoderSeqs[i]!;
      kv0 += s.held + s.generated;
      fewestLeft = Math.min(fewestLeft, s.req.outputTokens - s.generated);
    }
    if (quiet && decoders > 0 && Number.isFinite(fewestLeft)) repeat = Math.max(1, fewestLeft);
    // The other clients' sequences decode in the step too; their KV does not grow (held steady), the rest's does.
    let ms = mixedStepMs(p, prefillTokens, pairs, kv0, decoders + rep.others);
    if (repeat > 1) ms = repeat * ms + (p.step.decodeKvMsPerKToken * decoders * ((repeat * (repeat - 1)) / 2)) / 1000;
    st.pending = true;
    st.end = rep.clock + ms;
    st.chunks = chunks;
    st.decoders = decoders;
    st.repeat = repeat;
  }

  private finish(rep: Replica, s: Seq, at: number): void {
    rep.running.splice(rep.running.indexOf(s), 1);
    rep.inFlight--;
    this.inFlight--;
    this.done++;
    this.finishMs[s.id] = at;
  }

  private apply(rep: Replica, isZero: boolean): void {
    const st = rep.step;
    st.pending = false;
    const dt = st.end - rep.clock;
    rep.clock = st.end;
    this.now = st.end;
    this.steps += st.repeat;
    if (isZero && this.o.agentKvTokens !== undefined && this.done < this.requests.length) {
      this.agentSteps += st.repeat;
      this.agentMs += dt;
    }
    const now = this.now;
    for (let i = 0; i < st.chunks; i++) {
      const seq = st.chunkSeqs[i]!;
      const n = st.chunkTokens[i]!;
      seq.held += n;
      seq.prefillLeft -= n;
      if (seq.prefillLeft === 0) {
        seq.generated = 1;
        this.firstTokenMs[seq.id] = now;
        if (seq.generated >= seq.req.outputTokens) this.finish(rep, seq, now);
      }
    }
    for (let i = 0; i < st.decoders; i++) {
      const seq = st.decoderSeqs[i]!;
      seq.generated += st.repeat;
      if (seq.id >= 0 && seq.generated >= seq.req.outputTokens) this.finish(rep, seq, now);
    }
  }
}

function leastLoaded(replicas: readonly Replica[]): number {
  let best = 0;
  for (let i = 1; i < replicas.length; i++) if (replicas[i]!.inFlight < replicas[best]!.inFlight) best = i;
  return best;
}
