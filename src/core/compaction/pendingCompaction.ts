import type { ChatMessage } from '../messages';
import type { CompactionRecord, PinItem } from '../session/schema';
import type { SessionStore } from '../session/sessionStore';
import { isSettled } from '../vocabulary';
import type { SurvivalReport } from './checks';
import { survivalChecks } from './checks';
import { compactionRecord, headingTokens, mergedText, planOutcome, projectedContext, totalsOf } from './compactionOutput';
import type { BlockView, CompactionEvent, CompactionTotals, PlanOutcome } from './events';
import { Gate } from './gate';
import type { CompactionDeps } from './compactionDeps';
import { queuedView, type Block } from './partition';
import type { CompactionPlan } from './plan';
import { EndpointPicker } from './endpointPicker';
import { RunMeter } from './runMeter';
import { workerPaceMs } from './workerPace';
import { runWorker, UnusableSummaryError } from './workerRun';
import type { WorkerEndpoint } from './workerRun';

export type { CompactionDeps } from './compactionDeps';

interface BlockState {
  block: Block;
  view: BlockView;
  controller: AbortController | undefined;
  run: Promise<void> | undefined;
  attempts: number;
  /** Called once when the first output token arrives (prefill done). */
  onFirstToken?: () => void;
  /** A focus for this block alone (the review editor's "regenerate with a focus"), added to the standing one. */
  focus?: string;
  /** The max_tokens its last reply was cut off at, until a reply fits: its retries ask for twice that. */
  cutAt?: number | undefined;
  /** Its last failure was the reply (a refusal, a cut), not the server: at temperature 0 a retry likely gets it again. */
  replyFailed?: boolean;
}

export class CompactionCancelledError extends Error {
  constructor() {
    super('The compaction was cancelled; nothing was adopted.');
    this.name = 'CompactionCancelledError';
  }
}

/**
 * One compaction from dispatch to adoption. Blocks run concurrently through
 * the endpoint's limiter; each can be edited or regenerated alone; nothing
 * touches the session until adopt(), which writes a single event.
 */
export class PendingCompaction {
  readonly id: string;
  private readonly states: BlockState[];
  private readonly listeners = new Set<(e: CompactionEvent) => void>();
  private cancelled = false;
  private adopted = false;
  private focus: string | undefined;
  private refocused: boolean | undefined;
  /**
   * The planned run's time: compacting time until every block first had a summary (a failed block's immediate retry
   * included). What the planner predicted; a regeneration minutes later is not part of it.
   */
  private runMs: number | undefined;
  private readonly meter: RunMeter;
  private readonly gate: Gate;
  private readonly endpoints: WorkerEndpoint[];
  private readonly picker: EndpointPicker;
  /** Bumped on every block change; memoised merges are keyed by it. */
  private version = 0;
  private memo: { version: number; text: string; tokens: number | undefined } | undefined;

  constructor(
    readonly plan: CompactionPlan,
    private readonly deps: CompactionDeps,
  ) {
    this.id = deps.ids.next('c');
    this.focus = plan.settings.focus;
    this.gate = new Gate(Math.max(1, plan.workers.concurrency));
    this.endpoints = [{ model: deps.model, limiter: deps.limiter }, ...(deps.replicas ?? [])];
    this.meter = new RunMeter(deps.clock);
    this.picker = new EndpointPicker(this.endpoints.length, plan.settings.layout === 'cache-aligned', deps.clock);
    this.states = plan.blocks.map((block) => ({
      block,
      attempts: 0,
      controller: undefined,
      run: undefined,
      view: queuedView(block),
    }));
  }

  on(listener: (e: CompactionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: CompactionEvent): void {
    // Progress and lifecycle events leave the summaries as they were: keep the memoised merge.
    if (e.type !== 'block-streaming' && e.type !== 'ready' && e.type !== 'adopted' && e.type !== 'planned') this.version++;
    for (const l of this.listeners) l(e);
  }

  get blocks(): readonly BlockView[] {
    return this.states.map((s) => s.view);
  }

  get currentFocus(): string | undefined {
    return this.focus;
  }

  /** Whether the latest refocus redoes a block (undefined: none yet); false: every block was written, nothing redone. */
  get refocusApplied(): boolean | undefined {
    return this.refocused;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  /** Dispatches every block at once; the limiter decides how many run together. */
  start(): Promise<void> {
    this.emit({
      type: 'planned',
      compactionId: this.id,
      blocks: this.blocks.map((b) => ({ ...b })),
      headTokens: this.plan.replacedTokens,
      tailStartIndex: this.plan.snapshot.split.tailStartIndex,
      headingTokens: headingTokens(this.plan, this.states, this.focus, this.deps.count),
      layout: this.plan.settings.layout,
      mode: this.plan.settings.mode,
      focus: this.focus,
      ...(this.plan.choice ? { plan: this.plan.choice } : {}),
    });
    if (this.plan.settings.dispatch === 'longest-first' && this.states.length > 1) {
      const longest = this.states[this.states.length - 1]!;
      // The rest go, synchronously, at the longest prefix's first token or its end, so settled() always sees them.
      longest.onFirstToken = () => {
        for (const s of this.states) if (s !== longest && s.attempts === 0) this.dispatch(s);
      };
      this.dispatch(longest);
      return this.settled();
    }
    // In the planner's order: it predicted the wall time for that order.
    const order = this.plan.workers.order.length === this.states.length ? this.plan.workers.order : this.states.map((_, i) => i);
    for (const i of order) this.dispatch(this.states[i]!);
    return this.settled();
  }

  /** Resolves when no block is running (each may be done, failed or edited). */
  async settled(): Promise<void> {
    for (;;) {
      const running = this.states.map((s) => s.run).filter((r): r is Promise<void> => r !== undefined);
      if (running.length === 0) break;
      await Promise.all(running);
    }
    if (!this.cancelled && this.isComplete()) this.emitReady();
  }

  /** Every block has a summary: totals, checks and (the first time) the planned run's measured time. */
  private emitReady(): void {
    this.runMs ??= this.meter.busyNow();
    const outcome = this.outcome();
    this.emit({ type: 'ready', compactionId: this.id, totals: this.totals(), checks: this.checks(), ...(outcome ? { outcome } : {}) });
  }

  isComplete(): boolean {
    return this.states.length > 0 && this.states.every((s) => isSettled(s.view));
  }

  private dispatch(s: BlockState, reason = 'regenerate'): void {
    if (this.cancelled) return;
    const controller = new AbortController();
    s.controller = controller;
    s.attempts++;
    s.view = { ...s.view, status: 'queued', streamedTokens: 0, error: undefined };
    if (s.attempts > 1) this.emit({ type: 'block-retried', compactionId: this.id, block: s.block.index, attempt: s.attempts, reason });
    this.emit({ type: 'block-queued', compactionId: this.id, block: s.block.index });
    this.meter.workerStarted();
    const run = this.work(s, controller.signal).finally(() => {
      if (s.run === run) s.run = undefined;
      this.meter.workerEnded();
    });
    s.run = run;
  }

  private async work(s: BlockState, signal: AbortSignal): Promise<void> {
    try {
      const { text, stats } = await runWorker({
        plan: this.plan,
        block: s.block,
        // A block's own focus (the review editor's "regenerate with a focus") is added to the standing one.
        focus: s.focus ? (this.focus ? `${this.focus}; ${s.focus}` : s.focus) : this.focus,
        count: this.deps.count,
        clock: this.deps.clock,
        gate: this.gate,
        endpoints: this.endpoints,
        pickEndpoint: () => this.picker.pick(),
        attempts: s.attempts,
        // At temperature 0 the same max_tokens would most likely cut the retry at the same place.
        maxTokens: s.cutAt === undefined ? undefined : 2 * s.cutAt,
        signal,
        onSent: () => {
          this.meter.requestSent();
          s.view = { ...s.view, status: 'streaming' };
          // Shown at once: until its first tokens are read the request may wait in the server's queue or prefill.
          this.emit({ type: 'block-streaming', compactionId: this.id, block: s.block.index, outputTokens: 0 });
        },
        onEnded: (i, sent, failed) => {
          this.picker.ended(i, failed);
          if (sent) this.meter.requestEnded();
        },
        onFirstToken: () => {
          if (!s.onFirstToken) return;
          const f = s.onFirstToken;
          s.onFirstToken = undefined;
          f();
        },
        paceMs: () => workerPaceMs(this.meter.inFlight, this.deps.watched?.() ?? true),
        onProgress: (n) => {
          s.view = { ...s.view, streamedTokens: n };
          this.emit({ type: 'block-streaming', compactionId: this.id, block: s.block.index, outputTokens: n });
        },
      });
      if (signal.aborted) return;
      s.cutAt = undefined;
      s.view = { ...s.view, status: 'done', summary: text, stats, streamedTokens: stats.outputTokens };
      this.emit({ type: 'block-done', compactionId: this.id, block: s.block.index, summary: text, stats });
    } catch (err) {
      if (signal.aborted || this.cancelled) return;
      if (err instanceof UnusableSummaryError && err.cutAt !== undefined) {
        // A reply cut off has a known remedy, more room: retried at once, once; cut again, the block fails like any.
        const first = s.cutAt === undefined;
        s.cutAt = err.cutAt;
        if (first) {
          this.dispatch(s, err.message);
          return;
        }
      }
      const message = err instanceof Error ? err.message : String(err);
      s.replyFailed = err instanceof UnusableSummaryError;
      s.view = { ...s.view, status: 'failed', error: message };
      this.emit({ type: 'block-failed', compactionId: this.id, block: s.block.index, error: message });
    }
  }

  /** Replaces a block's summary with the developer's text. */
  edit(index: number, text: string): void {
    this.assertOpen();
    const s = this.stateAt(index);
    if (s.run) {
      s.controller?.abort();
      s.run = undefined;
    }
    s.view = { ...s.view, status: 'edited', summary: text, error: undefined };
    this.emit({ type: 'block-edited', compactionId: this.id, block: index, summary: text });
    // An edit can be what completes the set: report it as the workers' last block would.
    if (this.isComplete()) this.emitReady();
  }

  /** Runs one block again, optionally with a new focus; the others are kept. */
  regenerate(index: number, focus?: string): Promise<void> {
    this.assertOpen();
    const s = this.stateAt(index);
    if (focus !== undefined) s.focus = focus.trim() || undefined;
    s.controller?.abort();
    this.dispatch(s);
    return this.settled();
  }

  /** Retries every failed block alone; `serverOnly`: only those the server failed, not those whose reply was unusable. */
  retryFailed(o: { serverOnly?: boolean } = {}): Promise<void> {
    this.assertOpen();
    for (const s of this.states) if (s.view.status === 'failed' && !(o.serverOnly && s.replyFailed)) this.dispatch(s);
    return this.settled();
  }

  /** Blocks whose last failure was the server's (an error, a dropped connection), not their reply's. */
  get serverFailures(): number {
    return this.states.filter((s) => s.view.status === 'failed' && !s.replyFailed).length;
  }

  /**
   * A new focus supersedes the old one: blocks not yet finished are redone with
   * it (finished ones keep their summaries; the caller may regenerate them).
   * With every block finished nothing is redone, so the focus is not taken: the
   * summary must not claim a focus no block was written with. refocusApplied
   * tells the caller which happened.
   */
  refocus(focus: string | undefined): Promise<void> {
    this.assertOpen();
    const redo = this.states.filter((s) => !isSettled(s.view));
    this.refocused = redo.length > 0;
    if (redo.length === 0) return this.settled();
    this.focus = focus;
    this.version++;
    for (const s of redo) {
      s.controller?.abort();
      this.dispatch(s);
    }
    return this.settled();
  }

  cancel(): void {
    if (this.cancelled || this.adopted) return;
    this.cancelled = true;
    for (const s of this.states) s.controller?.abort();
    this.emit({ type: 'cancelled', compactionId: this.id });
  }

  private assertOpen(): void {
    if (this.cancelled) throw new CompactionCancelledError();
    if (this.adopted) throw new Error('This compaction was already adopted.');
  }

  private stateAt(index: number): BlockState {
    const s = this.states[index];
    if (!s) throw new RangeError(`No block ${index}; this compaction has ${this.states.length}.`);
    return s;
  }

  /** The merged summary text; only when every block is done or edited. */
  summaryText(): string {
    if (this.memo && this.memo.version === this.version) return this.memo.text;
    if (!this.isComplete()) {
      const pending = this.states
        .filter((s) => s.view.status !== 'done' && s.view.status !== 'edited')
        .map((s) => `${s.view.index} (${s.view.status})`);
      throw new Error(`Not every block has a summary yet: ${pending.join(', ')}.`);
    }
    const text = mergedText(this.plan, this.states, this.focus);
    this.memo = { version: this.version, text, tokens: undefined };
    return text;
  }

  /** Local token estimate of the merged summary. */
  summaryTokens(): number {
    const text = this.summaryText();
    if (this.memo!.tokens === undefined) this.memo!.tokens = this.deps.count({ role: 'user', content: text });
    return this.memo!.tokens;
  }

  /** The context the agent would send after adoption: [system, pinned, kept…, summary, …tail]. */
  projectedContext(): ChatMessage[] {
    return projectedContext(this.plan, this.summaryText());
  }

  /** Pins must survive verbatim; a drop in open loops is flagged. */
  checks(pins: readonly PinItem[] = this.plan.snapshot.pins): SurvivalReport {
    const ctx = this.plan.snapshot.context;
    const head = this.plan.snapshot.split.headIndices.map((i) => ctx[i]!);
    return survivalChecks(head, this.projectedContext(), this.summaryText(), pins, {
      headTokens: this.plan.replacedTokens,
      summaryTokens: this.summaryTokens(),
    });
  }

  totals(): CompactionTotals {
    return totalsOf(this.plan, this.blocks, {
      summaryTokens: this.isComplete() ? this.summaryTokens() : 0,
      // Time spent compacting: a block regenerated or retried later adds its run, not the minutes in between.
      wallMs: this.meter.busyNow(),
      requests: this.meter.requests,
      maxInFlight: this.meter.maxInFlight,
    });
  }

  /** The planner's prediction against the run, once it is complete. */
  outcome(): PlanOutcome | undefined {
    return this.isComplete()
      ? planOutcome(this.plan, { ...this.totals(), wallMs: this.runMs ?? this.meter.busyNow() }, this.blocks)
      : undefined;
  }

  /** The record adoption writes; ids point at the snapshot's messages. */
  toRecord(): Omit<CompactionRecord, 'at'> {
    return compactionRecord(this.plan, {
      id: this.id,
      now: this.deps.clock.now(),
      text: this.summaryText(),
      summaryTokens: this.summaryTokens(),
      totals: this.totals(),
      blocks: this.states.length,
      edited: this.states.filter((s) => s.view.status === 'edited').length,
      focus: this.focus,
    });
  }

  /**
   * Writes the compaction to the session as one event. Refuses when cancelled,
   * incomplete, or when the session no longer has the snapshot's messages.
   */
  async adopt(store: SessionStore): Promise<CompactionRecord> {
    this.assertOpen();
    const record = this.toRecord();
    const missing = [record.tailStartId, ...record.keptIds].filter((id): id is string => id !== null && !store.hasMessage(id));
    if (missing.length > 0)
      throw new Error(`The session no longer has message ${missing[0]}; this compaction's snapshot is stale. Run it again.`);
    const adopted = await store.adoptCompaction(record);
    this.adopted = true;
    this.emit({ type: 'adopted', compactionId: this.id, totals: this.totals() });
    return adopted;
  }
}
