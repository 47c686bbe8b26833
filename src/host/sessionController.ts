import { AgentLoop } from '../core/agent/agentLoop';
import type { AgentEvent } from '../core/agent/events';
import { addPin, pinTool } from '../core/agent/pinTool';
import { recallTool } from '../core/agent/recall';
import type { SpillPort } from '../core/agent/toolOutput';
import type { AgentTool } from '../core/agent/tools';
import { ToolRegistry } from '../core/agent/tools';
import { createCompaction, snapshotSession } from '../core/compaction/fromSession';
import type { PendingCompaction } from '../core/compaction/pendingCompaction';
import type { SplitpointSettings } from '../core/config/settings';
import type { LimiterPort, ModelPort } from '../core/ports';
import type { SessionEvent } from '../core/session/schema';
import type { SessionStore } from '../core/session/sessionStore';
import type { Clock, IdSource } from '../core/session/storage';
import type { TokenLedger } from '../core/tokens/tokenLedger';
import type { ApprovalView, HostToWebview, SessionListItem, VerdictView, ViewMessage, ViewSnapshot, WebviewToHost } from '../protocol/messages';
import { parseSlashCommand } from '../protocol/messages';
import { agentSettingsFrom } from './agentSettings';
import type { ApprovalCall, ApprovalPreview } from './approvals';
import { ApprovalBroker } from './approvals';
import { CompactionTracker } from './compactionTracker';
import type { HostLog } from './log';
import { gaugeView, pinView, splitView, toViewMessage, verdictView } from './viewModel';

/**
 * One session in the extension: its SessionStore, the AgentLoop that works
 * on it, the compaction shown in the view, and the open approvals. It turns
 * webview messages into engine calls and engine events into protocol deltas.
 * No 'vscode' here: the host injects the model ports, the workspace tools,
 * and hooks; the unit tests drive it with a fake model and memory storage.
 */

/** What may change while a session is open (settings, key, server window). */
export interface ControllerEnvironment {
  settings: SplitpointSettings;
  contextWindow: number;
  agent: ModelPort;
  compactor: ModelPort;
  compactorLimiter: LimiterPort;
  judge: ModelPort;
}

export interface ControllerDeps {
  store: SessionStore;
  ledger: TokenLedger;
  env: ControllerEnvironment;
  /** The workspace tools (read/list/search/edit/write/run); recall and pin are added here. */
  workspaceTools: (broker: ApprovalBroker) => AgentTool[];
  approvalPreview: (call: ApprovalCall) => Promise<ApprovalPreview>;
  spill?: SpillPort;
  clock: Clock;
  ids: IdSource;
  post: (msg: HostToWebview) => void;
  log: HostLog;
  /** The session list and this session's entry, from the host's library. */
  sessions: () => { session: SessionListItem; sessions: SessionListItem[] };
  connection: () => ViewSnapshot['connection'];
  trusted: () => boolean;
  /** Persist a strategy chosen in the view (the host writes the setting). */
  setStrategy: (s: SplitpointSettings['strategy']) => void;
  /** An agent error, for the host to turn into an actionable notification. */
  onError?: (message: string) => void;
  onApprovalAsked?: (view: ApprovalView) => void;
  onApprovalResolved?: (callId: string) => void;
  /** Gauge, depth or running state changed (status bar, context keys). */
  onStateChange?: () => void;
}

const MAX_PIN_CHARS = 2000;

export class SessionController {
  readonly store: SessionStore;
  readonly broker: ApprovalBroker;
  private env: ControllerEnvironment;
  private nextEnv: ControllerEnvironment | undefined;
  private loop!: AgentLoop;
  private readonly tools: ToolRegistry;
  private readonly tracker: CompactionTracker;
  private run: { abort: AbortController; done: Promise<void> } | undefined;
  private streaming = '';
  /** The compaction the user steers: their /compact preview, or a background result the loop held. */
  private owned: PendingCompaction | undefined;
  /** The loop's current background pending, recorded so a held result can be handed to the user. */
  private lastBackground: PendingCompaction | undefined;
  /** Judge verdicts by compaction id, shown on the adopted summary. */
  private readonly verdicts = new Map<string, VerdictView>();
  private readonly disposers: (() => void)[] = [];
  private idleTimer: ReturnType<typeof setInterval> | undefined;
  private disposed = false;

  constructor(private readonly deps: ControllerDeps) {
    this.store = deps.store;
    this.env = deps.env;
    this.broker = new ApprovalBroker({
      post: (m) => this.post(m),
      preview: deps.approvalPreview,
      onAsked: (v) => deps.onApprovalAsked?.(v),
      onResolved: (id) => deps.onApprovalResolved?.(id),
    });
    this.tools = new ToolRegistry([...deps.workspaceTools(this.broker), recallTool(() => this.store.archived()), pinTool(this.store, deps.ids, deps.clock)]);
    this.tracker = new CompactionTracker({ pins: () => this.store.snapshot.pins, judgeEnabled: () => this.env.settings.judge.enabled });
    this.buildLoop();
    this.disposers.push(this.store.onEvent((e) => this.onStoreEvent(e)));
    // The idle trigger needs a clock tick; once a minute is plenty for minutes-long idle times.
    this.idleTimer = setInterval(() => {
      if (!this.run && this.loop.maybeIdleCompact()) deps.log.info(`[${this.store.id}] idle compaction started`);
    }, 60_000);
    this.idleTimer.unref?.();
  }

  private buildLoop(): void {
    const env = this.env;
    this.loop = new AgentLoop(
      {
        store: this.store,
        ledger: this.deps.ledger,
        model: env.agent,
        compactor: env.compactor,
        compactorLimiter: env.compactorLimiter,
        judge: env.judge,
        tools: this.tools,
        approvals: this.broker,
        ...(this.deps.spill ? { spill: this.deps.spill } : {}),
        clock: this.deps.clock,
        ids: this.deps.ids,
      },
      agentSettingsFrom(env.settings, env.contextWindow),
    );
    this.loop.on((e) => this.onAgentEvent(e));
  }

  /**
   * New settings, key or window. Applied between turns: a running turn keeps
   * the loop it started with, and a background compaction in flight is
   * cancelled (its settings are stale).
   */
  updateEnvironment(env: ControllerEnvironment): void {
    if (this.run) {
      this.nextEnv = env;
      return;
    }
    this.loop.cancelCompaction();
    this.env = env;
    this.buildLoop();
    this.post({ type: 'snapshot', snapshot: this.snapshot() });
    this.deps.onStateChange?.();
  }

  get isRunning(): boolean {
    return this.run !== undefined;
  }

  get environment(): ControllerEnvironment {
    return this.env;
  }

  /** Calibrated tokens of the active context, for the status bar. */
  contextTokens(): number {
    return this.loop.contextTokens();
  }

  private post(msg: HostToWebview): void {
    if (!this.disposed) this.deps.post(msg);
  }

  private postAll(msgs: HostToWebview[]): void {
    for (const m of msgs) this.post(m);
  }

  // ------------------------------------------------------------ snapshot

  private viewMessages(): ViewMessage[] {
    const active = this.store.active();
    const archivedCount = active.compaction ? this.store.archived().length : 0;
    return active.messages.map((m, i) => {
      const v = toViewMessage(m, i, active.origins[i]!, this.deps.ledger);
      if (active.origins[i] === 'summary' && active.compaction) {
        v.archivedCount = archivedCount;
        const verdict = this.verdicts.get(active.compaction.id);
        if (verdict) v.verdict = verdict;
      }
      return v;
    });
  }

  private gauge() {
    return gaugeView(this.loop.contextTokens(), this.env.contextWindow, this.env.settings.thresholds);
  }

  private split() {
    const active = this.store.active();
    const stats = active.compaction?.stats;
    const perBlock = stats && typeof stats.summaryTokens === 'number' && typeof stats.blocks === 'number' && stats.blocks > 0 ? stats.summaryTokens / stats.blocks : undefined;
    const s = this.env.settings;
    return splitView(active.messages, this.deps.ledger, {
      strategy: s.strategy,
      window: this.env.contextWindow,
      // The same (clamped) reserve compaction uses, so the handle starts where compaction would split.
      replyReserve: agentSettingsFrom(s, this.env.contextWindow).replyReserve,
      blockTokens: s.blockTokens,
      verbosity: s.verbosity,
      lastSummaryTokensPerBlock: perBlock,
    });
  }

  snapshot(): ViewSnapshot {
    const s = this.env.settings;
    const { session, sessions } = this.deps.sessions();
    return {
      session,
      sessions,
      messages: this.viewMessages(),
      gauge: this.gauge(),
      split: this.split(),
      pins: this.store.snapshot.pins.map(pinView),
      focus: this.store.snapshot.focus,
      compaction: this.tracker.current,
      compactionDepth: this.store.snapshot.compactions.length,
      agent: { running: this.run !== undefined, streaming: this.streaming, approvals: this.broker.views },
      settings: { endpoint: s.endpoint, model: s.model ?? null, mode: s.mode, layout: s.layout, verbosity: s.verbosity },
      connection: this.deps.connection(),
      trusted: this.deps.trusted(),
    };
  }

  // ------------------------------------------------------------ events

  private onStoreEvent(e: SessionEvent): void {
    if (e.type === 'message') {
      const active = this.store.active();
      const i = active.messages.length - 1;
      if (active.messages[i]?.id === e.message.id) {
        this.post({ type: 'message-added', message: toViewMessage(active.messages[i]!, i, active.origins[i]!, this.deps.ledger), gauge: this.gauge(), split: this.split() });
      } else {
        this.post({ type: 'snapshot', snapshot: this.snapshot() });
      }
    } else {
      // Compaction, undo, pins and focus reshape the whole context (the pinned block sits at the top).
      this.post({ type: 'snapshot', snapshot: this.snapshot() });
    }
    this.deps.onStateChange?.();
  }

  private onAgentEvent(e: AgentEvent): void {
    const log = this.deps.log;
    const sid = this.store.id;
    if (e.type === 'compaction' && e.event.type === 'planned') {
      const bg = this.loop.backgroundCompaction;
      if (bg && bg.pending.id === e.event.compactionId) this.lastBackground = bg.pending;
    }
    this.postAll(this.tracker.onAgentEvent(e));
    switch (e.type) {
      case 'assistant-delta':
        this.streaming += e.text;
        this.post({ type: 'assistant-delta', text: e.text });
        return;
      case 'assistant-message':
        this.streaming = '';
        return;
      case 'step-started':
        log.debug(`[${sid}] step ${e.step}: ${e.contextTokens}/${e.window} tokens`);
        return;
      case 'tool-call':
        log.info(`[${sid}] tool ${e.call.function.name}${e.needsApproval ? ' (needs approval)' : ''}`);
        return;
      case 'tool-approval':
        log.info(`[${sid}] tool call ${e.callId} ${e.approved ? 'approved' : 'rejected'}`);
        return;
      case 'trigger-fired':
        log.info(`[${sid}] compaction trigger ${e.trigger} at ${(100 * e.usedFraction).toFixed(0)}% of the window`);
        if (e.trigger === 'reactive') {
          this.post({ type: 'notice', level: 'warning', text: `The server refused the request as longer than its context window (${e.detail ?? 'window unknown'}). Splitpoint is compacting the context and will retry once.` });
        }
        return;
      case 'waiting-for-compaction':
        this.post({ type: 'notice', level: 'info', text: `The context is ${(100 * e.usedFraction).toFixed(0)}% full: the agent waits for the background compaction to finish.` });
        return;
      case 'judge-verdict': {
        const v = verdictView(e.verdict, e.attempt);
        if (v) this.verdicts.set(e.compactionId, v);
        log.info(`[${sid}] judge on ${e.compactionId} (attempt ${e.attempt}, ${e.nextSteps} next steps): ${e.verdict.kind === 'scored' ? `${e.verdict.overall}/10 ${e.verdict.accepted ? 'accepted' : 'rejected'}` : `error: ${e.verdict.message}`}`);
        return;
      }
      case 'compaction-held':
        log.info(`[${sid}] compaction ${e.compactionId} held: ${e.reason}`);
        // The loop let go of it (terminal hold): the user may still adopt, edit or cancel it.
        if (!this.loop.backgroundCompaction && this.lastBackground?.id === e.compactionId) {
          this.owned = this.lastBackground;
          this.tracker.adoptAsPreview();
        }
        return;
      case 'compaction-adopted':
        log.info(`[${sid}] compaction ${e.compactionId} adopted: ${e.tokensBefore} → ${e.tokensAfter} tokens${e.judged ? ' (judged)' : ''}`);
        return;
      case 'compaction':
        if (e.event.type === 'ready' || e.event.type === 'adopted') {
          const t = e.event.totals;
          log.info(`[${sid}] compaction ${e.event.compactionId} ${e.event.type}: ${t.headTokens} → ${t.summaryTokens} tokens (×${t.compressionRatio.toFixed(1)}), ${t.requests} requests, max ${t.maxInFlight} in flight, ${t.inputTokens} in / ${t.outputTokens} out / ${t.cachedTokens} cached, ${t.wallMs} ms`);
        } else if (e.event.type === 'block-failed') {
          log.warn(`[${sid}] compaction ${e.event.compactionId} block ${e.event.block} failed: ${e.event.error}`);
        }
        return;
      case 'compaction-fallback':
      case 'compaction-failed':
        log.warn(`[${sid}] ${e.type} ${e.compactionId}: ${'reason' in e ? e.reason : e.error}`);
        return;
      case 'compaction-started':
        log.info(`[${sid}] compaction ${e.compactionId} started${e.background ? ' in the background' : ''}${e.focus ? ' with a focus' : ''}`);
        return;
      case 'notice':
        this.post({ type: 'notice', level: 'info', text: e.text });
        return;
      case 'error':
        log.error(`[${sid}] agent error: ${e.error}`);
        this.post({ type: 'notice', level: 'error', text: e.error });
        this.deps.onError?.(e.error);
        return;
      case 'done':
        log.info(`[${sid}] turn ended: ${e.reason} after ${e.steps} steps`);
        if (e.reason === 'max-steps') {
          this.post({ type: 'notice', level: 'warning', text: `The agent stopped after ${e.steps} steps (splitpoint.agent.maxSteps). Send a message to let it continue.` });
        }
        return;
      default:
        return;
    }
  }

  // ------------------------------------------------------------ webview messages

  /** Handles one (already validated) webview message; session-level ones are the host's. */
  async handle(msg: WebviewToHost): Promise<void> {
    switch (msg.type) {
      case 'send':
        return this.send(msg.text);
      case 'stop':
        return this.stop();
      case 'compact':
        return this.compact(msg.focus, msg.tailStartIndex);
      case 'set-strategy':
        this.deps.setStrategy(msg.strategy);
        return;
      case 'block-edit':
        return this.editBlock(msg.compactionId, msg.block, msg.text);
      case 'block-regenerate':
        return this.regenerateBlock(msg.compactionId, msg.block);
      case 'compaction-adopt':
        return this.adopt(msg.compactionId);
      case 'compaction-cancel':
        return this.cancelCompaction(msg.compactionId);
      case 'undo':
        return this.undo();
      case 'approve':
        if (!this.broker.approve(msg.callId)) this.notice('warning', 'That approval is no longer open.');
        return;
      case 'reject':
        this.broker.reject(msg.callId, msg.reason);
        return;
      case 'pin':
        return this.pin(msg.text, msg.kind, msg.messageId);
      case 'unpin':
        await this.store.setPins(this.store.snapshot.pins.filter((p) => p.id !== msg.pinId));
        return;
      case 'edit-pin': {
        const text = msg.text.trim();
        if (!text) return this.notice('warning', 'A pin cannot be empty; unpin it instead.');
        await this.store.setPins(this.store.snapshot.pins.map((p) => (p.id === msg.pinId ? { ...p, text: text.slice(0, MAX_PIN_CHARS) } : p)));
        return;
      }
      case 'expand-summary':
        return this.expand(msg.summaryId);
      case 'clear-focus':
        return this.loop.clearFocus();
      case 'ready':
      case 'visible':
        this.post({ type: 'snapshot', snapshot: this.snapshot() });
        return;
      case 'switch-session':
      case 'new-session':
        // The host owns the session list.
        return;
    }
  }

  private notice(level: 'info' | 'warning' | 'error', text: string): void {
    this.post({ type: 'notice', level, text });
  }

  async send(text: string): Promise<void> {
    const slash = parseSlashCommand(text);
    if (slash?.command === 'compact') return this.compact(slash.focus, null);
    if (slash?.command === 'unknown') return this.notice('warning', `Unknown command /${slash.name}. Available: /compact "what must survive".`);
    if (!text.trim()) return;
    if (this.run) return this.notice('warning', 'The agent is still working on the last message. Wait for it, or press Stop.');
    this.postAll(this.tracker.clearIfDone());
    const abort = new AbortController();
    const started = this.deps.clock.now();
    let resolveDone!: () => void;
    this.run = { abort, done: new Promise((r) => (resolveDone = r)) };
    this.post({ type: 'agent-state', running: true });
    this.deps.onStateChange?.();
    try {
      await this.loop.send(text, abort.signal);
    } catch (err) {
      this.notice('error', (err as Error).message);
    } finally {
      this.run = undefined;
      this.streaming = '';
      resolveDone();
      this.deps.log.info(`[${this.store.id}] turn took ${this.deps.clock.now() - started} ms`);
      this.post({ type: 'agent-state', running: false });
      if (this.nextEnv) {
        const next = this.nextEnv;
        this.nextEnv = undefined;
        this.updateEnvironment(next);
      }
      this.deps.onStateChange?.();
    }
  }

  /** Stops the running turn: the model call is aborted and open approvals are withdrawn. */
  async stop(): Promise<void> {
    const run = this.run;
    if (!run) return;
    run.abort.abort();
    await run.done;
  }

  /**
   * `/compact` and the view's Compact button. An auto compaction in flight is
   * superseded with the focus (its unfinished blocks are redone); otherwise
   * the user's compaction is a preview that waits for Adopt. A dragged split
   * replaces whatever runs, since a running compaction cannot move its split.
   */
  async compact(focus: string | null, tailStartIndex: number | null): Promise<void> {
    const f = focus?.trim() ? focus.trim() : undefined;
    const bg = this.loop.backgroundCompaction;
    if (tailStartIndex === null && bg && !bg.outcome) {
      await this.loop.userCompact(f, new AbortController().signal);
      return this.notice('info', f ? `The background compaction now uses your focus: "${f}".` : 'A background compaction is already running.');
    }
    if (tailStartIndex === null && f !== undefined && this.owned && this.tracker.isPreview && !this.owned.isComplete()) {
      // A new focus while the preview still runs: redo its unfinished blocks with it.
      await this.store.setFocus(f);
      void this.owned.refocus(f).catch(() => undefined);
      return;
    }
    if (bg && !bg.outcome) this.loop.cancelCompaction();
    this.owned?.cancel();
    this.owned = undefined;
    if (f !== undefined && f !== this.store.snapshot.focus) await this.store.setFocus(f);
    const env = this.env;
    const standing = this.store.snapshot.focus ?? undefined;
    const settings = agentSettingsFrom(env.settings, env.contextWindow);
    const snap = snapshotSession(this.store, this.deps.ledger, tailStartIndex === null ? { strategy: env.settings.strategy } : { manualIndex: tailStartIndex }, this.tools.specs(), {
      contextWindow: env.contextWindow,
      replyReserve: settings.replyReserve,
    });
    const pending = createCompaction(snap, { ...settings.compaction, focus: standing }, {
      model: env.compactor,
      limiter: env.compactorLimiter,
      count: (m) => this.deps.ledger.estimate(m),
      clock: this.deps.clock,
      ids: this.deps.ids,
    });
    if (pending.plan.blocks.length === 0) {
      return this.notice('info', tailStartIndex === null ? `Nothing to compact: the ${env.settings.strategy} split keeps the whole conversation.` : 'Nothing to compact before that split point.');
    }
    this.owned = pending;
    this.postAll(this.tracker.start(pending.id, false, standing, true));
    pending.on((e) => {
      this.postAll(this.tracker.onCompactionEvent(e));
      if (e.type === 'ready') this.deps.log.info(`[${this.store.id}] preview ${e.compactionId} ready: ${e.totals.headTokens} → ${e.totals.summaryTokens} tokens in ${e.totals.wallMs} ms (${e.totals.requests} requests, ${e.totals.cachedTokens} cached)`);
    });
    this.deps.log.info(`[${this.store.id}] preview ${pending.id}: ${pending.plan.blocks.length} blocks, ${pending.plan.headTokens} head tokens, split at ${snap.split.tailStartIndex}`);
    await pending.start();
    if (!pending.isCancelled && !pending.isComplete()) {
      const failed = pending.blocks.filter((b) => b.status === 'failed');
      if (failed.length > 0) this.notice('warning', `${failed.length} block${failed.length > 1 ? 's' : ''} failed (${failed[0]!.error}). Regenerate ${failed.length > 1 ? 'them' : 'it'}, edit the text, or cancel.`);
    }
  }

  private ownedFor(compactionId: string): PendingCompaction | undefined {
    if (this.owned && this.owned.id === compactionId) return this.owned;
    this.notice('warning', this.loop.backgroundCompaction?.pending.id === compactionId ? 'This compaction runs in the background and is checked by the judge; cancel it, or use /compact "focus" to steer it.' : 'That compaction is no longer open.');
    return undefined;
  }

  private async editBlock(id: string, block: number, text: string): Promise<void> {
    const p = this.ownedFor(id);
    if (!p) return;
    if (!text.trim()) return this.notice('warning', 'A block summary cannot be empty; regenerate it instead.');
    try {
      p.edit(block, text);
    } catch (err) {
      return this.notice('error', (err as Error).message);
    }
  }

  private async regenerateBlock(id: string, block: number): Promise<void> {
    const p = this.ownedFor(id);
    if (!p) return;
    try {
      await p.regenerate(block);
    } catch (err) {
      this.notice('error', (err as Error).message);
    }
  }

  private async adopt(id: string): Promise<void> {
    const bg = this.loop.backgroundCompaction;
    // A background summary held for the next message may be adopted by hand; the loop then lets it go.
    const p = this.owned?.id === id ? this.owned : bg && bg.pending.id === id && bg.heldForNextMessage ? bg.pending : undefined;
    if (!p) return this.notice('warning', 'That compaction cannot be adopted now (it is not finished, or it is no longer open).');
    if (!p.isComplete()) return this.notice('warning', 'Not every block has a summary yet: wait, regenerate the failed ones, or edit them.');
    const before = this.loop.contextTokens();
    try {
      await p.adopt(this.store);
    } catch (err) {
      return this.notice('error', (err as Error).message);
    }
    if (p !== this.owned) this.loop.cancelCompaction();
    this.owned = undefined;
    const after = this.loop.contextTokens();
    this.deps.log.info(`[${this.store.id}] adopted ${id} by hand: ${before} → ${after} tokens`);
    this.notice('info', `Compacted: ${before} → ${after} tokens. Undo Last Compaction restores the originals.`);
  }

  private async cancelCompaction(id: string): Promise<void> {
    if (this.owned?.id === id) {
      this.owned.cancel();
      this.owned = undefined;
      return;
    }
    const bg = this.loop.backgroundCompaction;
    if (bg && bg.pending.id === id) {
      this.loop.cancelCompaction();
      return;
    }
    if (this.tracker.owns(id) && this.tracker.isActive && this.run) {
      // The loop's synchronous compaction runs on the turn's signal: stopping is the only way to cancel it.
      this.notice('info', 'This compaction is part of the running turn; stopping the agent.');
      return this.stop();
    }
  }

  async undo(): Promise<void> {
    if (this.store.snapshot.compactions.length === 0) return this.notice('info', 'There is no compaction to undo.');
    // A compaction in flight was planned on the context being undone.
    this.loop.cancelCompaction();
    this.owned?.cancel();
    this.owned = undefined;
    try {
      const undone = await this.store.undoCompaction();
      this.deps.log.info(`[${this.store.id}] undid compaction ${undone.id}`);
      this.notice('info', `Undid the last compaction; ${this.store.snapshot.compactions.length} still in force.`);
    } catch (err) {
      this.notice('error', (err as Error).message);
    }
  }

  private async pin(text: string, kind: 'constraint' | 'open-loop' | 'note', messageId: string | null): Promise<void> {
    const t = text.trim();
    if (!t) return this.notice('warning', 'Nothing to pin: the text is empty.');
    if (t.length > MAX_PIN_CHARS) return this.notice('warning', `Pins are limited to ${MAX_PIN_CHARS} characters: the pinned block is sent with every request.`);
    const pin = await addPin(this.store, { text: t, kind, source: 'user', ...(messageId ? { messageId } : {}) }, this.deps.ids, this.deps.clock);
    if (!pin) this.notice('info', 'Already pinned.');
  }

  private expand(summaryId: string): void {
    const active = this.store.active();
    if (!active.compaction || active.compaction.summary.id !== summaryId) return this.notice('warning', 'That summary is not in force any more.');
    const all = this.store.snapshot.messages;
    const position = new Map(all.map((m, i) => [m.id, i]));
    // Archived originals carry their position in the full log, not in the active context.
    const messages = this.store.archived().map((m) => toViewMessage(m, position.get(m.id)!, 'summary', this.deps.ledger));
    this.post({ type: 'archived', summaryId, messages });
  }

  /** Waits for the turn and any background compaction (tests, session switch). */
  async settle(): Promise<void> {
    await this.run?.done;
    await this.loop.settle();
  }

  async dispose(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.broker.rejectAll('the session was closed');
    this.run?.abort.abort();
    await this.run?.done;
    this.loop.cancelCompaction();
    this.owned?.cancel();
    this.disposed = true;
    for (const d of this.disposers) d();
  }
}
