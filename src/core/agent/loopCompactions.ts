import type { PendingCompaction } from '../compaction/pendingCompaction';
import type { ChatMessage } from '../messages';
import type { BudgetState } from '../triggers';
import { evaluateBudget, evaluateIdle, INITIAL_BUDGET_STATE, promptRoom } from '../triggers';
import type { BackgroundOutcome } from './compactionRunner';
import { BackgroundCompaction } from './compactionRunner';
import type { AgentEvent } from './events';
import { abortable, Cancelled } from './loopSupport';
import { adoptPlanned, StaleCompactionError } from './planBase';
import type { AgentDeps, AgentSettings } from './loopTypes';
import { elapsedNow } from '../session/storage';

export type CompactTrigger = 'structural' | 'block' | 'reactive' | 'fallback';

/**
 * The agent loop's compaction side: the budget's hysteresis, the background
 * compaction and what happens to its outcome, the `block` stall, synchronous
 * compactions, the idle trigger, and the time the agent spent waiting.
 */
export class LoopCompactions {
  private budget: BudgetState = INITIAL_BUDGET_STATE;
  private background: BackgroundCompaction | undefined;
  private applying: Promise<void> | undefined;
  /** Stops the synchronous compaction a twice-rejected background summary fell back to. */
  private fallbackAbort: AbortController | undefined;
  private waitedMs = 0;
  private lastActivity: number;
  private lastIdleCompaction: number | undefined;

  constructor(
    private readonly deps: AgentDeps,
    /** The loop's own copy: the window can be corrected from the server's overflow error. */
    private readonly settings: AgentSettings,
    private readonly emit: (e: AgentEvent) => void,
    private readonly agentRunning: () => boolean,
    /** The next request's prompt tokens, server-counted: of the active context, or of a compaction's `projected` one. */
    private readonly contextTokens: (projected?: readonly ChatMessage[]) => number,
  ) {
    // Idle time is a duration: on the monotonic clock, so a wall clock stepped forward does not fire the trigger early.
    this.lastActivity = elapsedNow(deps.clock);
  }

  get current(): BackgroundCompaction | undefined {
    return this.background;
  }

  /** Time the agent spent blocked on compaction (the `block` wait, synchronous and reactive compactions). */
  get waitMs(): number {
    return this.waitedMs;
  }

  /** The user or the agent did something: the idle clock restarts. */
  touch(): void {
    this.lastActivity = elapsedNow(this.deps.clock);
  }

  /** A step ended or a message arrived: the background run may judge against it. */
  notifyStep(): void {
    this.background?.notifyStep();
  }

  async timed<T>(f: () => Promise<T>): Promise<T> {
    const t0 = elapsedNow(this.deps.clock);
    try {
      return await f();
    } finally {
      this.waitedMs += elapsedNow(this.deps.clock) - t0;
    }
  }

  /** What the thresholds are fractions of (see BudgetThresholds). */
  private room(): number {
    return promptRoom(this.settings.contextWindow, this.settings.replyReserve);
  }

  private standingFocus(): string | undefined {
    return this.deps.store.snapshot.focus ?? undefined;
  }

  /** Triggers before a model call, in order: a finished background compaction, then the budget. */
  async beforeModelCall(signal: AbortSignal): Promise<void> {
    // A summary held while the agent was idle is judged against the new
    // message now; wait for that verdict so the agent answers from the
    // compacted context it was judged for.
    const held = this.background?.heldForNextMessage ? this.background : undefined;
    if (held) {
      this.emit({ type: 'judging-held-compaction', compactionId: held.id });
      await this.timed(() => abortable(held.done, signal));
    }
    await this.timed(() => this.adoptIfSettled(signal));
    const s = this.settings;
    const used = this.contextTokens();
    const inProgress = this.background !== undefined || (this.deps.userCompaction?.() ?? false);
    const r = evaluateBudget(used, this.room(), s.thresholds, this.budget, inProgress);
    this.budget = r.state;
    // Events say how full the window is, as the gauges do; the decision's own fraction is of the prompt's room.
    const usedFraction = used / s.contextWindow;
    switch (r.decision.kind) {
      case 'ok':
      case 'in-progress':
        return;
      case 'start-background':
        if (!s.asyncCompaction) return;
        this.emit({ type: 'trigger-fired', trigger: 'budget', usedFraction });
        this.startBackground(this.standingFocus());
        return;
      case 'wait':
        this.emit({ type: 'trigger-fired', trigger: 'block', usedFraction });
        await this.timed(() => this.makeRoom('block', signal));
        return;
    }
  }

  /**
   * The agent cannot go on until the context fits (at `block`, or refused by the server): a background run is hurried
   * and adopted if it can be, since its work is most of the way done; only what still does not fit is compacted now.
   */
  private async makeRoom(trigger: 'block' | 'reactive', signal: AbortSignal): Promise<void> {
    const before = this.contextTokens();
    const bg = this.background;
    if (bg) {
      // The only stall: the context is full and the summary is not ready.
      this.emit({ type: 'waiting-for-compaction', compactionId: bg.id, usedFraction: before / this.settings.contextWindow });
      bg.hurry();
      await abortable(bg.done, signal);
      await this.adoptIfSettled(signal);
    }
    const after = this.contextTokens();
    // A refused request fits only after something was adopted: the server counted more than the local estimate.
    const fits = after < this.settings.thresholds.block * this.room() && (trigger === 'block' || after < before);
    if (!fits) await this.compactNow({ focus: this.standingFocus(), trigger, signal });
  }

  private startBackground(focus: string | undefined): BackgroundCompaction | undefined {
    const bg = new BackgroundCompaction(
      { ...this.deps, emit: this.emit },
      this.settings,
      this.deps.tools.specs(),
      focus,
      this.agentRunning(),
    );
    if (bg.empty) {
      this.emit({ type: 'notice', text: `Nothing to compact: the ${this.settings.strategy} split keeps the whole conversation.` });
      return undefined;
    }
    this.background = bg;
    bg.begin(true);
    void bg.done.then(() => {
      // An idle agent adopts as soon as the result is in; a running one at its next step.
      if (!this.agentRunning()) void this.adoptIfSettled();
    });
    return bg;
  }

  /** Waits until the background compaction (if any) has finished and its outcome is applied. */
  async settle(): Promise<void> {
    for (;;) {
      const bg = this.background;
      if (bg) await bg.done.catch(() => undefined);
      await this.applying;
      await this.adoptIfSettled();
      if (!this.background || this.background === bg) return;
    }
  }

  /**
   * Applies a finished background compaction: adopt, hold, or fall back to a synchronous one, which `signal` (a turn's)
   * and cancel() both stop.
   */
  adoptIfSettled(signal?: AbortSignal): Promise<void> {
    const p = this.applyOutcome(signal).finally(() => {
      if (this.applying === p) this.applying = undefined;
    });
    this.applying = p;
    return p;
  }

  private async applyOutcome(signal: AbortSignal | undefined): Promise<void> {
    const bg = this.background;
    const outcome: BackgroundOutcome | undefined = bg?.outcome;
    if (!bg || !outcome) return;
    this.background = undefined;
    switch (outcome.kind) {
      case 'accepted':
        try {
          await this.adopt(outcome.pending, outcome.verdict !== undefined);
        } catch (err) {
          // Planned on compactions no longer in force: report it, keep the session as it is.
          if (!(err instanceof StaleCompactionError)) throw err;
          this.emit({ type: 'compaction-failed', compactionId: outcome.pending.id, error: err.message });
        }
        return;
      case 'held':
        this.emit({ type: 'compaction-held', compactionId: outcome.pending.id, reason: outcome.reason });
        return;
      case 'fallback': {
        this.emit({ type: 'compaction-fallback', compactionId: bg.id, reason: outcome.reason });
        // Synchronous: a running agent waits for it at this step boundary. Not the loop's background run any more, so
        // cancel() reaches it through its own controller.
        const own = new AbortController();
        this.fallbackAbort = own;
        try {
          const stop = signal ? AbortSignal.any([signal, own.signal]) : own.signal;
          await this.compactNow({ focus: this.standingFocus(), trigger: 'fallback', signal: stop });
        } catch (err) {
          // Cancelled by the user: nothing adopted, nothing to report; a turn's stop is the turn's to report.
          if (!(err instanceof Cancelled)) this.emit({ type: 'error', error: (err as Error).message });
          else if (signal?.aborted) throw err;
        } finally {
          if (this.fallbackAbort === own) this.fallbackAbort = undefined;
        }
        return;
      }
      case 'failed':
        this.emit({ type: 'compaction-failed', compactionId: bg.id, error: outcome.reason });
        return;
      case 'cancelled':
        return;
    }
  }

  private async adopt(pending: PendingCompaction, judged: boolean): Promise<void> {
    const before = this.contextTokens();
    await adoptPlanned(pending, this.deps.store);
    const after = this.contextTokens();
    // A new pressure episode starts once a compaction got usage back under hi;
    // one that could not, does not immediately start another (block still applies).
    if (after < this.settings.thresholds.hi * this.room()) this.budget = { armed: true };
    this.emit({ type: 'compaction-adopted', compactionId: pending.id, tokensBefore: before, tokensAfter: after, judged });
  }

  /**
   * See AgentLoop.compactNow. The user may adopt or undo a compaction while this one runs, which makes it stale: it is
   * then not needed if the context fits, or planned once more on the conversation as it now is.
   */
  async compactNow(o: { focus: string | undefined; trigger: CompactTrigger; signal: AbortSignal }): Promise<PendingCompaction | undefined> {
    try {
      return await this.compactOnce(o);
    } catch (err) {
      if (!(err instanceof StaleCompactionError)) throw err;
      if (this.contextTokens() < this.settings.thresholds.block * this.room()) return undefined;
      return this.compactOnce(o);
    }
  }

  private async compactOnce(o: {
    focus: string | undefined;
    trigger: CompactTrigger;
    signal: AbortSignal;
  }): Promise<PendingCompaction | undefined> {
    const settings = { ...this.settings, judge: { ...this.settings.judge, enabled: false } };
    const bg = new BackgroundCompaction({ ...this.deps, emit: this.emit }, settings, this.deps.tools.specs(), o.focus, false);
    if (bg.empty) {
      this.emit({ type: 'notice', text: 'Nothing to compact: the split keeps the whole conversation.' });
      return undefined;
    }
    bg.begin(false);
    const onAbort = () => bg.cancel();
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const outcome = await bg.done;
      if (outcome.kind === 'accepted') {
        this.refuseIfStillTooLong(outcome.pending, bg.id);
        try {
          await this.adopt(outcome.pending, false);
        } catch (err) {
          if (err instanceof StaleCompactionError) this.emit({ type: 'compaction-failed', compactionId: bg.id, error: err.message });
          throw err;
        }
        return outcome.pending;
      }
      if (outcome.kind === 'cancelled') throw new Cancelled();
      const reason = outcome.reason;
      this.emit({ type: 'compaction-failed', compactionId: bg.id, error: reason });
      throw new Error(`Compaction failed (${reason}); the session is unchanged.`);
    } finally {
      o.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A compaction the agent waits for is adopted only if the request it waits to send then fits: one whose kept messages
   * are too long on their own would replace the older ones with a summary and still fail, so the session stays as it is.
   */
  private refuseIfStillTooLong(pending: PendingCompaction, compactionId: string): void {
    const left = this.contextTokens(pending.projectedContext());
    const room = this.settings.contextWindow - this.settings.replyReserve;
    if (left <= room) return;
    const reason =
      `it would leave ${left} tokens, more than the ${room} a request may use (the ${this.settings.contextWindow}-token window ` +
      `less ${this.settings.replyReserve} for the reply): the messages it keeps are too long on their own`;
    this.emit({ type: 'compaction-failed', compactionId, error: reason });
    throw new Error(
      `Compaction not adopted: ${reason}. The session is unchanged; move the split point later (drag it in the side bar, ` +
        'then Compact here), start a new session, or give the server a larger window.',
    );
  }

  /** See AgentLoop.userCompact. */
  async userCompact(focus: string | undefined, signal: AbortSignal): Promise<void> {
    const store = this.deps.store;
    const f = focus?.trim() ? focus.trim() : undefined;
    if (f !== undefined && f !== store.snapshot.focus) await store.setFocus(f);
    const usedFraction = this.contextTokens() / this.settings.contextWindow;
    this.emit({ type: 'trigger-fired', trigger: 'structural', usedFraction, detail: f });
    const standing = this.standingFocus();
    if (this.background && !this.background.outcome) {
      this.background.refocus(standing);
      return;
    }
    await this.compactNow({ focus: standing, trigger: 'structural', signal });
  }

  /** The host's idle timer calls this; compacts in the background when the user has been away. */
  maybeIdleCompact(): boolean {
    if (this.agentRunning() || this.background) return false;
    const now = elapsedNow(this.deps.clock);
    const usedTokens = this.contextTokens();
    const windowTokens = this.settings.contextWindow;
    const idle = { nowMs: now, lastActivityMs: this.lastActivity, lastIdleCompactionMs: this.lastIdleCompaction, usedTokens, windowTokens };
    const fire = evaluateIdle(idle, this.settings.idle);
    if (!fire) return false;
    this.lastIdleCompaction = now;
    this.emit({ type: 'trigger-fired', trigger: 'temporal', usedFraction: this.contextTokens() / windowTokens });
    return this.startBackground(this.standingFocus()) !== undefined;
  }

  /**
   * Hands a summary held for the next message to the user instead of judging it: resolves once the loop has let it
   * go (compaction-held, with BackgroundCompaction's RELEASED reason). False when none is held, or the judge has begun
   * on a message (then it is adopted or not as the judge decides).
   */
  async releaseHeld(): Promise<boolean> {
    const bg = this.background;
    if (!bg?.release()) return false;
    await bg.done.catch(() => undefined);
    await this.applying;
    await this.adoptIfSettled();
    return true;
  }

  /** Cancels the background compaction, or the synchronous one its rejection fell back to, if any; nothing is adopted. */
  cancel(): void {
    this.background?.cancel();
    this.fallbackAbort?.abort();
  }

  /** The server refused the request as too long: see makeRoom. */
  async reactive(signal: AbortSignal): Promise<void> {
    await this.timed(() => this.makeRoom('reactive', signal));
  }
}
