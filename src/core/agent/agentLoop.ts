import type { PendingCompaction } from '../compaction/pendingCompaction';
import type { ChatMessage, StoredMessage } from '../messages';
import { toWire } from '../messages';
import type { ModelResult } from '../ports';
import { cappedReplyReserve, evaluateOverflow, thresholdsOfWindow } from '../triggers';
import type { BackgroundCompaction } from './compactionRunner';
import type { AgentEvent } from './events';
import type { CompactTrigger } from './loopCompactions';
import { LoopCompactions } from './loopCompactions';
import { Cancelled, isOverflow } from './loopSupport';
import type { AgentDeps, AgentSettings, RunOutcome } from './loopTypes';
import { runToolCalls } from './toolRunner';
import { TOOL_OUTPUT_WINDOW_SHARE } from './toolOutput';

export type { AgentDeps, AgentSettings, RunOutcome } from './loopTypes';

/**
 * The agent: model call → tool calls → tool results → repeat, until the
 * model answers without tools or the step limit. Compaction is wired in
 * (LoopCompactions): background at `hi`, a wait at `block`, synchronous on the
 * server's overflow error, and `/compact` on demand. Every state change goes
 * through the session store, so a cancelled or crashed run leaves a
 * consistent log.
 */
export class AgentLoop {
  private readonly listeners = new Set<(e: AgentEvent) => void>();
  private running = false;
  private readonly settings: AgentSettings;
  private readonly compactions: LoopCompactions;

  constructor(
    private readonly deps: AgentDeps,
    settings: AgentSettings,
  ) {
    // A copy: the window can be corrected from the server's overflow error.
    this.settings = { ...settings, compaction: { ...settings.compaction } };
    this.compactions = new LoopCompactions(
      deps,
      this.settings,
      this.emit,
      () => this.running,
      (projected) => this.contextTokens(projected),
    );
  }

  on(listener: (e: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit = (e: AgentEvent): void => {
    for (const l of this.listeners) l(e);
  };

  get isRunning(): boolean {
    return this.running;
  }

  get backgroundCompaction(): BackgroundCompaction | undefined {
    return this.compactions.current;
  }

  /** Time the agent spent blocked on compaction (the `block` wait, synchronous and reactive compactions). */
  get compactionWaitMs(): number {
    return this.compactions.waitMs;
  }

  /**
   * Tokens the next request would send, as the server would count them: the messages and the tool definitions. The
   * messages are the active context's, or `projected`, the context a compaction would leave.
   */
  contextTokens(projected?: readonly ChatMessage[]): number {
    const { ledger } = this.deps;
    // A projected context is not the session's (yet): estimated, not cached.
    const local = projected
      ? this.withTools(projected.reduce((n, m) => n + ledger.estimate(m), 0))
      : this.localPromptTokens(this.deps.store.active().messages);
    return ledger.calibrated(local);
  }

  private localPromptTokens(context: readonly StoredMessage[]): number {
    return this.withTools(this.deps.ledger.total(context));
  }

  private withTools(messageTokens: number): number {
    return messageTokens + this.deps.ledger.toolTokens(this.deps.tools.specs());
  }

  /** Adds the user's message and runs the agent until it answers, stops, or is cancelled. */
  async send(text: string, signal: AbortSignal): Promise<RunOutcome> {
    if (this.running) throw new Error('The agent is already running; wait for it or stop it first.');
    await this.deps.store.append({ role: 'user', content: text });
    this.compactions.touch();
    this.compactions.notifyStep();
    return this.run(signal);
  }

  /** Continues from the current session state (e.g. after a reload with a pending tool result). */
  async run(signal: AbortSignal): Promise<RunOutcome> {
    if (this.running) throw new Error('The agent is already running.');
    this.running = true;
    let steps = 0;
    try {
      for (; steps < this.settings.maxSteps; steps++) {
        if (signal.aborted) throw new Cancelled();
        await this.compactions.beforeModelCall(signal);
        this.emit({ type: 'step-started', step: steps, contextTokens: this.contextTokens(), window: this.settings.contextWindow });
        const { reply, cutOff, textCalls } = await this.callModel(signal);
        const calls = reply.tool_calls ?? [];
        // Calls parsed from text are whole (a cut block does not parse), so what the limit cut is only said.
        if (cutOff && (calls.length === 0 || textCalls))
          this.emit({
            type: 'notice',
            text: `The reply stopped at its limit of ${this.settings.replyReserve} tokens (the reply reserve): ask the agent to go on.`,
          });
        if (calls.length === 0) {
          this.compactions.notifyStep();
          this.emit({ type: 'done', reason: 'answer', steps: steps + 1 });
          return { reason: 'answer', steps: steps + 1 };
        }
        // The share is the step's: the calls of one step split it, since no compaction shrinks the tail they land in.
        const outputBudget = {
          maxTokens: Math.floor((this.settings.contextWindow * TOOL_OUTPUT_WINDOW_SHARE) / Math.max(1, calls.length)),
          count: (text: string) => this.deps.ledger.calibrated(this.deps.ledger.countText(text)),
        };
        const cutOffAt = cutOff && !textCalls ? this.settings.replyReserve : undefined;
        await runToolCalls({ ...this.deps, outputBudget, emit: this.emit }, calls, signal, cutOffAt);
        this.compactions.notifyStep();
        this.compactions.touch();
      }
      this.emit({ type: 'done', reason: 'max-steps', steps });
      return { reason: 'max-steps', steps };
    } catch (err) {
      if (err instanceof Cancelled || signal.aborted) {
        this.emit({ type: 'done', reason: 'cancelled', steps });
        return { reason: 'cancelled', steps };
      }
      const message = err instanceof Error ? err.message : String(err);
      this.emit({ type: 'error', error: message });
      this.emit({ type: 'done', reason: 'error', steps });
      return { reason: 'error', steps, error: message };
    } finally {
      this.running = false;
      this.compactions.touch();
      void this.compactions.adoptIfSettled();
    }
  }

  /**
   * Waits until the background compaction (if any) has finished and its
   * outcome is applied; for callers that end a session or a test.
   */
  settle(): Promise<void> {
    return this.compactions.settle();
  }

  /**
   * Compacts the current context now and adopts it (the agent waits). Used for
   * the reactive trigger, the `block` stall without a background run, the
   * judge's fallback, and the headless `/compact`.
   */
  compactNow(o: { focus: string | undefined; trigger: CompactTrigger; signal: AbortSignal }): Promise<PendingCompaction | undefined> {
    return this.compactions.compactNow(o);
  }

  /**
   * `/compact "focus…"`: the focus becomes the standing focus; an in-flight
   * background compaction is superseded (its unfinished blocks are redone with
   * it); otherwise a compaction starts now in the background and is adopted
   * without the judge, since the user asked for it.
   */
  userCompact(focus: string | undefined, signal: AbortSignal): Promise<void> {
    return this.compactions.userCompact(focus, signal);
  }

  /** The user did something besides sending a message (steered a compaction): the idle clock restarts. */
  noteUserActivity(): void {
    this.compactions.touch();
  }

  /** The user takes the background summary held for the next message to review now (see LoopCompactions). */
  releaseHeldCompaction(): Promise<boolean> {
    return this.compactions.releaseHeld();
  }

  /** Clears the standing focus. */
  async clearFocus(): Promise<void> {
    if (this.deps.store.snapshot.focus !== null) await this.deps.store.setFocus(null);
  }

  /** The host's idle timer calls this; compacts in the background when the user has been away. */
  maybeIdleCompact(): boolean {
    return this.compactions.maybeIdleCompact();
  }

  /** Cancels the background compaction, if any; nothing is adopted. */
  cancelCompaction(): void {
    this.compactions.cancel();
  }

  /**
   * One model call with the reactive trigger (on a context-length 400, compact and retry once): the reply, and
   * whether max_tokens (the reply reserve) cut it off.
   */
  private async callModel(
    signal: AbortSignal,
  ): Promise<{ reply: Extract<StoredMessage, { role: 'assistant' }>; cutOff: boolean; textCalls: boolean }> {
    let retried = false;
    for (;;) {
      const context = this.deps.store.active().messages;
      const wire: ChatMessage[] = context.map(toWire);
      const localPrompt = this.localPromptTokens(context);
      let result: ModelResult;
      try {
        result = await this.deps.model.chat(
          {
            messages: wire,
            tools: this.deps.tools.specs(),
            toolChoice: 'auto',
            maxTokens: this.settings.replyReserve,
            ...(this.settings.agentModel ? { model: this.settings.agentModel } : {}),
            ...(this.settings.temperature !== undefined ? { temperature: this.settings.temperature } : {}),
          },
          {
            signal,
            onDelta: (d) => {
              if (d.type === 'content') this.emit({ type: 'assistant-delta', text: d.text });
              else if (d.type === 'reasoning') this.emit({ type: 'reasoning-delta', text: d.text });
              else if (d.type === 'reset') this.emit({ type: 'reply-reset', attempt: d.attempt, reason: d.reason });
            },
          },
        );
      } catch (err) {
        if (signal.aborted) throw new Cancelled();
        const overflow = isOverflow(err);
        if (!overflow) throw err;
        const decision = evaluateOverflow(overflow, retried);
        if (decision.kind === 'give-up') throw new Error(`The server refused the request as too long: ${decision.reason}.`, { cause: err });
        // A server that stopped counting gives a floor: the local estimate may be lower than what it already saw.
        const usedFraction = (overflow.input ?? Math.max(localPrompt, overflow.inputAtLeast ?? 0)) / overflow.window;
        this.emit({ type: 'trigger-fired', trigger: 'reactive', usedFraction, detail: `server window ${overflow.window}` });
        if (overflow.window < this.settings.contextWindow) this.correctWindow(overflow.window);
        await this.compactions.reactive(signal);
        retried = true;
        continue;
      }
      // The factor is kept in the log (only when it moved) so a reopened session starts calibrated.
      const calibration = this.deps.ledger.calibration;
      if (result.usage && calibration.observe(result.usage.promptTokens, localPrompt))
        await this.deps.store.recordCalibration(calibration.toJSON());
      const m = result.message;
      const stored = await this.deps.store.append({
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls && m.tool_calls.length > 0 ? { tool_calls: m.tool_calls } : {}),
        ...(result.reasoning ? { reasoning: result.reasoning } : {}),
      });
      this.emit({ type: 'assistant-message', message: stored });
      // A streamed reply that wrote a call says 'tool_calls' even when max_tokens stopped it (vLLM's serving_chat):
      // the token count tells (vLLM checks the length cap before end of sequence, so reaching it means it stopped
      // there; a call that was whole at exactly the limit is held back too, which the model is told may be so).
      const cutOff = result.finishReason === 'length' || (result.usage?.completionTokens ?? 0) >= this.settings.replyReserve;
      return { reply: stored as Extract<StoredMessage, { role: 'assistant' }>, cutOff, textCalls: result.toolProtocol === 'text' };
    }
  }

  /** The server knows its window better than our settings: use it from now on. */
  private correctWindow(window: number): void {
    this.emit({ type: 'window-corrected', window, was: this.settings.contextWindow });
    const s = this.settings;
    s.contextWindow = window;
    // As agentSettingsFrom derives them: the reserve at most half the window, and lo of the new prompt room.
    s.replyReserve = cappedReplyReserve(s.replyReserve, window);
    s.compaction = { ...s.compaction, contextWindow: window, targetFraction: thresholdsOfWindow(s.thresholds, window, s.replyReserve).lo };
  }
}
