import type { PendingCompaction } from '../compaction/pendingCompaction';
import type { ChatMessage, StoredMessage, ToolCall } from '../messages';
import { toWire } from '../messages';
import { parseContextOverflow } from '../overflowError';
import type { ModelPort, ModelResult } from '../ports';
import type { BudgetState, BudgetThresholds } from '../triggers';
import { evaluateBudget, evaluateIdle, evaluateOverflow, INITIAL_BUDGET_STATE } from '../triggers';
import type { AgentEvent } from './events';
import type { BackgroundOutcome, CompactionRunnerDeps, CompactionRunnerSettings } from './compactionRunner';
import { BackgroundCompaction } from './compactionRunner';
import type { SpillPort } from './toolOutput';
import { capToolOutput } from './toolOutput';
import type { ApprovalPort, ToolRegistry } from './tools';
import { parseArguments, ToolInputError } from './tools';

export interface AgentDeps extends Omit<CompactionRunnerDeps, 'emit'> {
  model: ModelPort;
  tools: ToolRegistry;
  approvals: ApprovalPort;
  spill?: SpillPort;
}

export interface AgentSettings extends CompactionRunnerSettings {
  contextWindow: number;
  thresholds: BudgetThresholds;
  /** Compact in the background at `hi` (true) or only synchronously at `block` (false). */
  asyncCompaction: boolean;
  maxSteps: number;
  agentModel?: string | undefined;
  temperature?: number | undefined;
  idle: { idleMs: number; minFraction: number };
}

export type RunOutcome = { reason: 'answer' | 'max-steps' | 'cancelled' | 'error'; steps: number; error?: string };

class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

function isOverflow(err: unknown): { window: number; input: number | undefined } | undefined {
  const e = err as { kind?: unknown; window?: unknown; input?: unknown; message?: unknown };
  if (e && e.kind === 'context-overflow' && typeof e.window === 'number') return { window: e.window, input: typeof e.input === 'number' ? e.input : undefined };
  return typeof e?.message === 'string' ? parseContextOverflow(e.message) : undefined;
}

/**
 * The agent: model call → tool calls → tool results → repeat, until the
 * model answers without tools or the step limit. Compaction is wired in:
 * background at `hi`, a wait at `block`, synchronous on the server's overflow
 * error, and `/compact` on demand. Every state change goes through the
 * session store, so a cancelled or crashed run leaves a consistent log.
 */
export class AgentLoop {
  private readonly listeners = new Set<(e: AgentEvent) => void>();
  private budget: BudgetState = INITIAL_BUDGET_STATE;
  private background: BackgroundCompaction | undefined;
  private running = false;
  private lastActivity: number;
  private lastIdleCompaction: number | undefined;

  private readonly settings: AgentSettings;

  constructor(
    private readonly deps: AgentDeps,
    settings: AgentSettings,
  ) {
    // A copy: the window can be corrected from the server's overflow error.
    this.settings = { ...settings, compaction: { ...settings.compaction } };
    this.lastActivity = deps.clock.now();
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
    return this.background;
  }

  /** Tokens the next request would send, as the server would count them. */
  contextTokens(): number {
    const local = this.deps.ledger.total(this.deps.store.active().messages);
    return this.deps.ledger.calibrated(local);
  }

  private runnerDeps(): CompactionRunnerDeps {
    return { ...this.deps, emit: this.emit };
  }

  /** Adds the user's message and runs the agent until it answers, stops, or is cancelled. */
  async send(text: string, signal: AbortSignal): Promise<RunOutcome> {
    if (this.running) throw new Error('The agent is already running; wait for it or stop it first.');
    await this.deps.store.append({ role: 'user', content: text });
    this.lastActivity = this.deps.clock.now();
    this.background?.notifyStep();
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
        await this.beforeModelCall(signal);
        this.emit({ type: 'step-started', step: steps, contextTokens: this.contextTokens(), window: this.settings.contextWindow });
        const reply = await this.callModel(signal);
        const calls = reply.tool_calls ?? [];
        if (calls.length === 0) {
          this.background?.notifyStep();
          this.emit({ type: 'done', reason: 'answer', steps: steps + 1 });
          return { reason: 'answer', steps: steps + 1 };
        }
        await this.runTools(calls, signal);
        this.background?.notifyStep();
        this.lastActivity = this.deps.clock.now();
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
      this.lastActivity = this.deps.clock.now();
      void this.adoptIfSettled();
    }
  }

  /** Triggers, in order: a finished background compaction, then the budget. */
  private async beforeModelCall(signal: AbortSignal): Promise<void> {
    // A summary held while the agent was idle is judged against the new
    // message now; wait for that verdict so the agent answers from the
    // compacted context it was judged for.
    const held = this.background?.heldForNextMessage ? this.background : undefined;
    if (held) await this.timed(() => abortable(held.done, signal));
    await this.timed(() => this.adoptIfSettled());
    const used = this.contextTokens();
    const r = evaluateBudget(used, this.settings.contextWindow, this.settings.thresholds, this.budget, this.background !== undefined);
    this.budget = r.state;
    const d = r.decision;
    switch (d.kind) {
      case 'ok':
      case 'in-progress':
        return;
      case 'start-background':
        if (!this.settings.asyncCompaction) return;
        this.emit({ type: 'trigger-fired', trigger: 'budget', usedFraction: d.usedFraction });
        this.startBackground(this.deps.store.snapshot.focus ?? undefined);
        return;
      case 'wait':
        this.emit({ type: 'trigger-fired', trigger: 'block', usedFraction: d.usedFraction });
        await this.timed(async () => {
          const bg = this.background;
          if (bg) {
            // The only stall: the context is full and the summary is not ready.
            this.emit({ type: 'waiting-for-compaction', usedFraction: d.usedFraction });
            bg.hurry();
            await abortable(bg.done, signal);
            await this.adoptIfSettled();
          }
          if (this.contextTokens() >= this.settings.thresholds.block * this.settings.contextWindow) {
            await this.compactNow({ focus: this.deps.store.snapshot.focus ?? undefined, trigger: 'block', signal });
          }
        });
        return;
    }
  }

  private startBackground(focus: string | undefined): BackgroundCompaction | undefined {
    const bg = new BackgroundCompaction(this.runnerDeps(), this.settings, this.deps.tools.specs(), focus);
    if (bg.empty) {
      this.emit({ type: 'notice', text: `Nothing to compact: the ${this.settings.strategy} split keeps the whole conversation.` });
      return undefined;
    }
    this.background = bg;
    this.emit({ type: 'compaction-started', compactionId: bg.id, background: true, focus });
    void bg.done.then(() => {
      // An idle agent adopts as soon as the result is in; a running one at its next step.
      if (!this.running) void this.adoptIfSettled();
    });
    return bg;
  }

  /**
   * Waits until the background compaction (if any) has finished and its
   * outcome is applied; for callers that end a session or a test.
   */
  async settle(): Promise<void> {
    for (;;) {
      const bg = this.background;
      if (bg) await bg.done.catch(() => undefined);
      await this.applying;
      await this.adoptIfSettled();
      if (!this.background || this.background === bg) return;
    }
  }

  private applying: Promise<void> | undefined;
  private waitedMs = 0;

  /** Time the agent spent blocked on compaction (the `block` wait, synchronous and reactive compactions). */
  get compactionWaitMs(): number {
    return this.waitedMs;
  }

  private async timed<T>(f: () => Promise<T>): Promise<T> {
    const t0 = this.deps.clock.now();
    try {
      return await f();
    } finally {
      this.waitedMs += this.deps.clock.now() - t0;
    }
  }

  /** Applies a finished background compaction: adopt, hold, or fall back to a synchronous one. */
  private adoptIfSettled(): Promise<void> {
    const p = this.applyOutcome().finally(() => {
      if (this.applying === p) this.applying = undefined;
    });
    this.applying = p;
    return p;
  }

  private async applyOutcome(): Promise<void> {
    const bg = this.background;
    const outcome: BackgroundOutcome | undefined = bg?.outcome;
    if (!bg || !outcome) return;
    this.background = undefined;
    switch (outcome.kind) {
      case 'accepted':
        await this.adopt(outcome.pending, outcome.verdict !== undefined);
        return;
      case 'held':
        this.emit({ type: 'compaction-held', compactionId: outcome.pending.id, reason: outcome.reason });
        return;
      case 'fallback':
        this.emit({ type: 'compaction-fallback', compactionId: bg.id, reason: outcome.reason });
        // Synchronous: a running agent waits for it at this step boundary.
        try {
          await this.compactNow({ focus: this.deps.store.snapshot.focus ?? undefined, trigger: 'fallback', signal: new AbortController().signal });
        } catch (err) {
          this.emit({ type: 'error', error: (err as Error).message });
        }
        return;
      case 'failed':
        this.emit({ type: 'compaction-failed', compactionId: bg.id, error: outcome.reason });
        return;
      case 'cancelled':
        return;
    }
  }

  private async adopt(pending: PendingCompaction, judged: boolean): Promise<void> {
    const before = this.contextTokens();
    await pending.adopt(this.deps.store);
    const after = this.contextTokens();
    // A new pressure episode starts once a compaction got usage back under hi;
    // one that could not, does not immediately start another (block still applies).
    if (after < this.settings.thresholds.hi * this.settings.contextWindow) this.budget = { armed: true };
    this.emit({ type: 'compaction-adopted', compactionId: pending.id, tokensBefore: before, tokensAfter: after, judged });
  }

  /**
   * Compacts the current context now and adopts it (the agent waits). Used for
   * the reactive trigger, the `block` stall without a background run, the
   * judge's fallback, and the headless `/compact`.
   */
  async compactNow(o: { focus: string | undefined; trigger: 'structural' | 'block' | 'reactive' | 'fallback'; signal: AbortSignal }): Promise<PendingCompaction | undefined> {
    const bg = new BackgroundCompaction(this.runnerDeps(), { ...this.settings, judge: { ...this.settings.judge, enabled: false } }, this.deps.tools.specs(), o.focus);
    if (bg.empty) {
      this.emit({ type: 'notice', text: 'Nothing to compact: the split keeps the whole conversation.' });
      return undefined;
    }
    this.emit({ type: 'compaction-started', compactionId: bg.id, background: false, focus: o.focus });
    const onAbort = () => bg.cancel();
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const outcome = await bg.done;
      if (outcome.kind === 'accepted') {
        await this.adopt(outcome.pending, false);
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
   * `/compact "focus…"`: the focus becomes the standing focus; an in-flight
   * background compaction is superseded (its unfinished blocks are redone with
   * it); otherwise a compaction starts now in the background and is adopted
   * without the judge, since the user asked for it.
   */
  async userCompact(focus: string | undefined, signal: AbortSignal): Promise<void> {
    const f = focus?.trim() ? focus.trim() : undefined;
    if (f !== undefined && f !== this.deps.store.snapshot.focus) await this.deps.store.setFocus(f);
    this.emit({ type: 'trigger-fired', trigger: 'structural', usedFraction: this.contextTokens() / this.settings.contextWindow, detail: f });
    const standing = this.deps.store.snapshot.focus ?? undefined;
    if (this.background && !this.background.outcome) {
      this.background.refocus(standing);
      return;
    }
    await this.compactNow({ focus: standing, trigger: 'structural', signal });
  }

  /** Clears the standing focus. */
  async clearFocus(): Promise<void> {
    if (this.deps.store.snapshot.focus !== null) await this.deps.store.setFocus(null);
  }

  /** The host's idle timer calls this; compacts in the background when the user has been away. */
  maybeIdleCompact(): boolean {
    if (this.running || this.background) return false;
    const fire = evaluateIdle(
      {
        nowMs: this.deps.clock.now(),
        lastActivityMs: this.lastActivity,
        lastIdleCompactionMs: this.lastIdleCompaction,
        usedTokens: this.contextTokens(),
        windowTokens: this.settings.contextWindow,
      },
      this.settings.idle,
    );
    if (!fire) return false;
    this.lastIdleCompaction = this.deps.clock.now();
    this.emit({ type: 'trigger-fired', trigger: 'temporal', usedFraction: this.contextTokens() / this.settings.contextWindow });
    return this.startBackground(this.deps.store.snapshot.focus ?? undefined) !== undefined;
  }

  /** Cancels the background compaction, if any; nothing is adopted. */
  cancelCompaction(): void {
    this.background?.cancel();
  }

  /** One model call with the reactive trigger: on a context-length 400, compact and retry once. */
  private async callModel(signal: AbortSignal): Promise<Extract<StoredMessage, { role: 'assistant' }>> {
    let retried = false;
    for (;;) {
      const context = this.deps.store.active().messages;
      const wire: ChatMessage[] = context.map(toWire);
      const localPrompt = this.deps.ledger.total(context);
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
            },
          },
        );
      } catch (err) {
        if (signal.aborted) throw new Cancelled();
        const overflow = isOverflow(err);
        if (!overflow) throw err;
        const decision = evaluateOverflow(overflow, retried);
        if (decision.kind === 'give-up') throw new Error(`The server refused the request as too long: ${decision.reason}.`);
        this.emit({ type: 'trigger-fired', trigger: 'reactive', usedFraction: (overflow.input ?? localPrompt) / overflow.window, detail: `server window ${overflow.window}` });
        if (overflow.window < this.settings.contextWindow) {
          // The server knows its window better than our settings: use it from now on.
          this.emit({ type: 'notice', text: `The server's context window is ${overflow.window} tokens, not ${this.settings.contextWindow}; using ${overflow.window}.` });
          this.settings.contextWindow = overflow.window;
          this.settings.compaction = { ...this.settings.compaction, contextWindow: overflow.window };
        }
        this.background?.cancel();
        this.background = undefined;
        await this.timed(() => this.compactNow({ focus: this.deps.store.snapshot.focus ?? undefined, trigger: 'reactive', signal }));
        retried = true;
        continue;
      }
      // The factor is kept in the log (only when it moved) so a reopened session starts calibrated.
      const calibration = this.deps.ledger.calibration;
      if (result.usage && calibration.observe(result.usage.promptTokens, localPrompt)) await this.deps.store.recordCalibration(calibration.toJSON());
      const m = result.message;
      const stored = await this.deps.store.append({
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls && m.tool_calls.length > 0 ? { tool_calls: m.tool_calls } : {}),
        ...(result.reasoning ? { reasoning: result.reasoning } : {}),
      });
      this.emit({ type: 'assistant-message', message: stored });
      return stored as Extract<StoredMessage, { role: 'assistant' }>;
    }
  }

  /**
   * Runs the calls of one assistant message in order. Every call gets a result
   * message, even when rejected or cancelled, so the log never has a call
   * without its answer.
   */
  private async runTools(calls: readonly ToolCall[], signal: AbortSignal): Promise<void> {
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (signal.aborted) {
        for (const rest of calls.slice(i)) await this.appendResult(rest.id, '[Not run: the user stopped the agent.]', true);
        throw new Cancelled();
      }
      const tool = this.deps.tools.get(call.function.name);
      const parsed = parseArguments(call.function.arguments);
      if (!tool) {
        await this.appendResult(call.id, `Unknown tool "${call.function.name}". Available: ${this.deps.tools.specs().map((s) => s.function.name).join(', ')}.`, true);
        continue;
      }
      if (!parsed.ok) {
        await this.appendResult(call.id, `Invalid arguments for ${call.function.name}: ${parsed.error}.`, true);
        continue;
      }
      const needsApproval = tool.needsApproval(parsed.args);
      this.emit({ type: 'tool-call', call, needsApproval });
      if (needsApproval) {
        let decision;
        try {
          decision = await this.deps.approvals.request({ id: call.id, tool: call.function.name, args: parsed.args, summary: tool.describe(parsed.args) }, signal);
        } catch {
          decision = { approved: false as const, reason: signal.aborted ? 'the user stopped the agent' : 'the approval request failed' };
        }
        this.emit({ type: 'tool-approval', callId: call.id, approved: decision.approved, ...(decision.approved ? {} : { reason: decision.reason }) });
        if (!decision.approved) {
          await this.appendResult(call.id, `The user rejected this ${call.function.name} call${decision.reason ? `: ${decision.reason}` : ''}.`, true);
          if (signal.aborted) {
            for (const rest of calls.slice(i + 1)) await this.appendResult(rest.id, '[Not run: the user stopped the agent.]', true);
            throw new Cancelled();
          }
          continue;
        }
      }
      let content: string;
      let isError = false;
      try {
        const r = await tool.execute(parsed.args, { signal, callId: call.id });
        content = r.content;
        isError = r.isError === true;
      } catch (err) {
        if (signal.aborted) {
          await this.appendResult(call.id, '[Cancelled while running: the user stopped the agent.]', true);
          for (const rest of calls.slice(i + 1)) await this.appendResult(rest.id, '[Not run: the user stopped the agent.]', true);
          throw new Cancelled();
        }
        content = err instanceof ToolInputError ? `Invalid arguments: ${err.message}` : `Error: ${(err as Error).message}`;
        isError = true;
      }
      await this.appendResult(call.id, await capToolOutput(content, call.id, this.deps.spill), isError);
    }
  }

  private async appendResult(callId: string, content: string, isError: boolean): Promise<void> {
    const message = await this.deps.store.append({ role: 'tool', tool_call_id: callId, content });
    this.emit({ type: 'tool-result', callId, message, isError });
  }
}

/** Waits for a promise unless the signal fires first. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
