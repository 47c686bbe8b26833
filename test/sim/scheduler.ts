/**
 * The simulator's engine: one step loop in the manner of vLLM v1's scheduler.
 *
 * Each step has a budget of `maxNumBatchedTokens` tokens:
 *   1. every running sequence that has finished its prefill decodes one token
 *      (1 token of budget each, in admission order);
 *   2. running sequences still prefilling get their next chunk (in admission order);
 *   3. waiting requests are admitted FIFO while budget, sequence slots
 *      (`maxNumSeqs`) and KV blocks allow; the prefix-cache lookup happens at
 *      admission and the cached tokens are never prefilled (vLLM always
 *      recomputes at least the last prompt token). Admission stops at the
 *      first request that does not fit (no skipping ahead).
 * The step's time is `stepTimeMs(profile, work)` with, per prefill chunk, the
 * tokens the sequence already holds (cached prefix plus earlier chunks), and
 * for the decode term each decoding sequence's current length (prompt plus
 * tokens generated so far). The step that completes a prefill samples the
 * sequence's first token; each later step one more.
 *
 * KV: prompt blocks are taken at admission (shared prefix blocks once, see
 * prefixCache.ts); decoded tokens take no blocks. So a sequence once admitted
 * always fits and there is no preemption: a request that does not fit waits
 * until running ones finish (or, when nothing runs, is admitted anyway and its
 * overflow is simply not cached).
 */
import { stepTimeMs, type PerfProfile, type StepWork } from '../../src/core/perf/profile';
import type { VirtualClock } from './clock';
import type { PrefixCache } from './prefixCache';
import type { RequestRecord, SimStats } from './stats';

export interface SchedulerLimits {
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
}

interface Seq {
  record: RequestRecord;
  tokens: number[];
  /** Output tokens to decode. */
  output: number;
  /** Prompt tokens in KV (cached prefix plus chunks computed so far). */
  computed: number;
  generated: number;
  state: 'waiting' | 'running' | 'ended';
  /** Cancelled while a step that includes it was running: dropped at the step's end. */
  cancelled?: RequestRecord['status'];
  waiters: Array<{ n: number; resolve: (ok: boolean) => void }>;
}

/** The server's view of one submitted sequence. */
export interface SeqHandle {
  /** Resolves true once `n` output tokens exist (n = 0: once prefill is done), false if the sequence ended first. */
  tokens(n: number): Promise<boolean>;
  /** Ends the sequence (client gone, server error): leaves the queue or frees its blocks. */
  cancel(status?: 'aborted' | 'error'): void;
}

export class Scheduler {
  private readonly waiting: Seq[] = [];
  private readonly running: Seq[] = [];
  private looping = false;
  private inStep = false;

  constructor(
    readonly profile: PerfProfile,
    readonly limits: SchedulerLimits,
    readonly cache: PrefixCache,
    readonly clock: VirtualClock,
    readonly stats: SimStats,
  ) {}

  submit(record: RequestRecord, tokens: number[], outputTokens: number): SeqHandle {
    const seq: Seq = { record, tokens, output: outputTokens, computed: 0, generated: 0, state: 'waiting', waiters: [] };
    record.arrival = this.clock.now();
    record.status = 'queued';
    this.waiting.push(seq);
    this.counters();
    this.kick();
    return {
      tokens: (n) => this.waitTokens(seq, n),
      cancel: (status = 'aborted') => this.cancel(seq, status),
    };
  }

  /** Stops stepping after the current step (the clock stands still) until resume(). */
  pause(): void {
    this.clock.pause();
  }

  resume(): void {
    this.clock.resume();
    this.kick();
  }

  get idle(): boolean {
    return this.waiting.length === 0 && this.running.length === 0;
  }

  private waitTokens(seq: Seq, n: number): Promise<boolean> {
    if (this.reached(seq, n)) return Promise.resolve(true);
    if (seq.state === 'ended') return Promise.resolve(false);
    return new Promise((resolve) => seq.waiters.push({ n, resolve }));
  }

  private reached(seq: Seq, n: number): boolean {
    return seq.record.firstToken !== undefined && seq.generated >= Math.min(n, seq.output);
  }

  private notify(seq: Seq): void {
    const ended = seq.state === 'ended';
    seq.waiters = seq.waiters.filter((w) => {
      if (this.reached(seq, w.n)) w.resolve(true);
      else if (ended) w.resolve(false);
      else return true;
      return false;
    });
  }

  private cancel(seq: Seq, status: 'aborted' | 'error'): void {
    if (seq.state === 'ended' || seq.cancelled) return;
    if (seq.state === 'waiting') {
      this.waiting.splice(this.waiting.indexOf(seq), 1);
      this.end(seq, status);
      return;
    }
    // A step that includes it is already under way: its work is spent; it leaves at the step's end.
    if (this.inStep) seq.cancelled = status;
    else this.end(seq, status);
  }

  private end(seq: Seq, status: RequestRecord['status']): void {
    const r = seq.record;
    r.status = status;
    r.finished = this.clock.now();
    if (seq.state === 'running') {
      this.running.splice(this.running.indexOf(seq), 1);
      this.cache.release(r.id);
    }
    seq.state = 'ended';
    if (status === 'done') {
      this.stats.e2e.observe((r.finished - r.arrival) / 1000);
      if (r.firstToken !== undefined && seq.output > 1) r.tpotMs = (r.finished - r.firstToken) / (seq.output - 1);
    }
    this.counters();
    this.notify(seq);
    this.kick();
  }

  private counters(): void {
    const s = this.stats;
    s.running = this.running.length;
    s.queued = this.waiting.length;
    s.maxRunning = Math.max(s.maxRunning, s.running);
    s.maxQueued = Math.max(s.maxQueued, s.queued);
  }

  private kick(): void {
    if (this.looping || this.clock.paused || this.idle) return;
    this.looping = true;
    this.clock.startBusy();
    void this.loop();
  }

  private async loop(): Promise<void> {
    try {
      while (!this.clock.paused && !this.idle) {
        const plan = this.schedule();
        const ms = stepTimeMs(this.profile, plan.work);
        this.inStep = true;
        const end = await this.clock.runStep(ms);
        this.inStep = false;
        this.stats.steps++;
        this.stats.busyMs += ms;
        this.apply(plan, ms, end);
      }
    } finally {
      this.inStep = false;
      this.looping = false;
      this.clock.stopBusy();
    }
    // Work may have arrived during the last await of a pause/resume race.
    this.kick();
  }

  private schedule(): { decode: Seq[]; prefill: Array<{ seq: Seq; n: number }>; work: StepWork } {
    let budget = this.limits.maxNumBatchedTokens;
    const decode: Seq[] = [];
    const prefill: Array<{ seq: Seq; n: number }> = [];
    for (const s of this.running) {
      if (budget === 0) break;
      if (s.record.firstToken === undefined) continue;
      decode.push(s);
      budget--;
    }
    for (const s of this.running) {
      if (budget === 0) break;
      if (s.record.firstToken !== undefined) continue;
      const n = Math.min(s.tokens.length - s.computed, budget);
      prefill.push({ seq: s, n });
      budget -= n;
    }
    const now = this.clock.now();
    while (budget > 0 && this.waiting.length > 0 && this.running.length < this.limits.maxNumSeqs) {
      const s = this.waiting[0];
      if (this.running.length > 0 && !this.cache.canAdmit(s.tokens)) break;
      this.waiting.shift();
      const a = this.cache.admit(s.record.id, s.tokens);
      s.state = 'running';
      s.computed = a.cachedTokens;
      this.running.push(s);
      Object.assign(s.record, { status: 'running', admitted: now, cachedTokens: a.cachedTokens, runningAtAdmission: this.running.length });
      const n = Math.min(s.tokens.length - s.computed, budget);
      prefill.push({ seq: s, n });
      budget -= n;
    }
    this.counters();
    const work: StepWork = {
      prefill: prefill.map((p) => ({ newTokens: p.n, heldTokens: p.seq.computed })),
      decodeSeqs: decode.length,
      decodeKvTokens: decode.reduce((sum, s) => sum + s.tokens.length + s.generated, 0),
    };
    return { decode, prefill, work };
  }

  private apply(plan: ReturnType<Scheduler['schedule']>, ms: number, end: number): void {
    const finished: Seq[] = [];
    for (const { seq, n } of plan.prefill) {
      if (seq.state !== 'running') continue;
      seq.computed += n;
      seq.record.prefillSteps = (seq.record.prefillSteps ?? 0) + 1;
      if (seq.computed < seq.tokens.length) continue;
      this.cache.prefillDone(seq.record.id);
      seq.record.firstToken = end;
      this.stats.ttft.observe((end - seq.record.arrival) / 1000);
      if (seq.output > 0) seq.generated = 1;
      if (seq.generated >= seq.output) finished.push(seq);
    }
    for (const seq of plan.decode) {
      if (seq.state !== 'running') continue;
      seq.generated++;
      this.stats.tpot.observe(ms / 1000);
      if (seq.generated >= seq.output) finished.push(seq);
    }
    for (const seq of [...plan.prefill.map((p) => p.seq), ...plan.decode]) {
      seq.record.generatedTokens = seq.generated;
      this.notify(seq);
    }
    for (const seq of finished) if (!seq.cancelled) this.end(seq, 'done');
    for (const seq of [...this.running]) if (seq.cancelled) this.end(seq, seq.cancelled);
  }
}
