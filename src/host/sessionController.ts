import { AgentLoop } from '../core/agent/agentLoop';
import { onAgentEvent, type AgentEvent } from '../core/agent/events';
import { pinTool } from '../core/agent/pinTool';
import { recallTool } from '../core/agent/recall';
import { ToolRegistry } from '../core/agent/tools';
import type { SplitpointSettings } from '../core/config/settings';
import type { SessionEvent } from '../core/session/schema';
import type { SessionStore } from '../core/session/sessionStore';
import { elapsedNow } from '../core/session/storage';
import type { HostToWebview, VerdictView, ViewSnapshot, WebviewToHost } from '../protocol/messages';
import { parseSlashCommand } from '../protocol/messages';
import { agentSettingsFrom, compactorOnAgentServer } from './agentSettings';
import { withWindow, type ControllerEnvironment } from './controllerEnvironment';
import { ApprovalBroker } from './approvals';
import { controllerAgentEvents, type AgentEventSink } from './agentEventLog';
import { CompactionTracker } from './compactionTracker';
import { PostCoalescer } from './postCoalescer';
import { AgentWait, waitSink } from './agentWait';
import { PinActions } from './pinActions';
import { lossHeadline } from './review/lossHeadline';
import { contextRef, sessionGauge, sessionSnapshot, sessionSplit, splitChange, viewMessages } from './sessionSnapshot';
import { UserCompactions } from './userCompactions';
import { toViewMessage, verdictView } from './viewModel';
import { dispatchWebview, type SessionOps } from './webviewDispatch';
import type { ControllerDeps } from './controllerDeps';

/**
 * One session in the extension: its SessionStore, the AgentLoop that works
 * on it, the compaction shown in the view, and the open approvals. It turns
 * webview messages into engine calls and engine events into protocol deltas.
 * No 'vscode' here: the host injects the model ports, the workspace tools,
 * and hooks; the unit tests drive it with a fake model and memory storage.
 */

export class SessionController {
  readonly store: SessionStore;
  readonly broker: ApprovalBroker;
  /** The user's compactions (previews, held background results, undo). */
  readonly compactions: UserCompactions;
  readonly pins: PinActions;
  private env: ControllerEnvironment;
  private nextEnv: ControllerEnvironment | undefined;
  private loop!: AgentLoop;
  private readonly tools: ToolRegistry;
  private readonly tracker: CompactionTracker;
  private run: { abort: AbortController; done: Promise<void> } | undefined;
  private streaming = '';
  private readonly deltas = new PostCoalescer((msg) => {
    if (!this.disposed) this.deps.post(msg);
  });
  /** Judge verdicts by compaction id, shown on the adopted summary. */
  private readonly verdicts = new Map<string, VerdictView>();
  private readonly eventSink: AgentEventSink;
  private readonly wait: AgentWait;
  private readonly disposers: (() => void)[] = [];
  private idleTimer: ReturnType<typeof setInterval> | undefined;
  private disposed = false;

  constructor(private readonly deps: ControllerDeps) {
    this.store = deps.store;
    this.env = deps.env;
    for (const [id, v] of Object.entries(this.store.snapshot.verdicts)) {
      const view = verdictView(v.verdict, v.attempt);
      if (view) this.verdicts.set(id, view);
    }
    this.broker = new ApprovalBroker({
      post: (m) => this.post(m),
      preview: deps.approvalPreview,
      onAsked: (v) => deps.onApprovalAsked?.(v),
      onResolved: (id) => deps.onApprovalResolved?.(id),
    });
    this.tools = new ToolRegistry([
      ...deps.workspaceTools(this.broker),
      recallTool(() => this.store.archived(), deps.spill),
      pinTool(this.store, deps.ids, deps.clock),
    ]);
    this.tracker = new CompactionTracker({
      pins: () => this.store.snapshot.pins,
      judgeEnabled: () => this.env.settings.judge.enabled,
      loss: (view) => lossHeadline(viewMessages(this.store, deps.ledger, this.verdicts, { whole: true }), view),
      lossFailed: (err) => deps.log.warn(`[${this.store.id}] no loss report for the compaction: ${(err as Error).message ?? String(err)}`),
      ...(deps.wantsDeltas ? { wantsDeltas: deps.wantsDeltas } : {}),
      context: () => contextRef(this.store),
      calibrated: (n) => deps.ledger.calibrated(n),
    });
    this.compactions = new UserCompactions({
      store: this.store,
      ledger: deps.ledger,
      tracker: this.tracker,
      clock: deps.clock,
      ids: deps.ids,
      log: deps.log,
      loop: () => this.loop,
      env: () => this.env,
      tools: () => this.tools.specs(),
      running: () => this.run !== undefined,
      stop: () => this.stop(),
      post: (msgs) => this.postAll(msgs),
      notice: (level, text) => this.notice(level, text),
      confirm: deps.confirm ?? (() => Promise.resolve(true)),
      ...(deps.wantsDeltas ? { watched: deps.wantsDeltas } : {}),
    });
    this.pins = new PinActions(this.store, deps.ids, deps.clock, (level, text) => this.notice(level, text));
    this.wait = new AgentWait({
      now: () => elapsedNow(deps.clock),
      post: (waiting) => this.post({ type: 'agent-waiting', waiting }),
      inTurn: () => this.run !== undefined,
      replyStreaming: () => this.streaming.length > 0,
    });
    this.eventSink = {
      log: deps.log,
      sid: this.store.id,
      notice: (level, text) => this.notice(level, text),
      streamed: (text) => {
        if (text === null) {
          this.streaming = '';
          return;
        }
        this.streaming += text;
        this.wait.endSilently();
        this.deltas.delta(text);
      },
      replyReset: () => {
        this.streaming = '';
        this.deltas.discardText();
        this.deltas.post({ type: 'assistant-reset' });
      },
      ...waitSink(this.wait),
      recordVerdict: (id, v) => this.verdicts.set(id, v),
      held: (id) => this.compactions.held(id),
      windowCorrected: (window) => {
        this.env = withWindow(this.env, window);
        // Settings changed during this turn wait for its end, read before the correction: they get it too.
        if (this.nextEnv) this.nextEnv = withWindow(this.nextEnv, window);
        this.env.correctWindow?.(window);
        this.deps.onStateChange?.();
      },
      error: (message) => deps.onError?.(message),
    };
    this.buildLoop();
    this.disposers.push(this.store.onEvent((e) => this.onStoreEvent(e)));
    // The idle trigger needs a clock tick; once a minute is plenty for minutes-long idle times.
    this.idleTimer = setInterval(() => this.idleTick(), 60_000);
    this.idleTimer.unref?.();
  }

  /** The idle trigger's tick: never while a turn runs, nor while the user steers a compaction of their own. */
  idleTick(): boolean {
    if (this.run || this.compactions.ownsPreview || !this.loop.maybeIdleCompact()) return false;
    this.deps.log.info(`[${this.store.id}] idle compaction started`);
    return true;
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
        ...(env.replicas ? { replicas: env.replicas } : {}),
        compactorOnAgentServer: compactorOnAgentServer(env.settings),
        ...(env.profile ? { profile: env.profile } : {}),
        ...(env.serverLoad ? { serverLoad: () => env.serverLoad!.latest() } : {}),
        judge: env.judge,
        tools: this.tools,
        approvals: this.broker,
        ...(this.deps.spill ? { spill: this.deps.spill } : {}),
        ...(this.deps.wantsDeltas ? { watched: this.deps.wantsDeltas } : {}),
        userCompaction: () => this.compactions.ownsPreview,
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
    this.deltas.post(msg);
  }

  private postAll(msgs: HostToWebview[]): void {
    for (const m of msgs) this.post(m);
  }

  private notice(level: 'info' | 'warning' | 'error', text: string): void {
    this.post({ type: 'notice', level, text });
  }

  snapshot(): ViewSnapshot {
    return sessionSnapshot({
      store: this.store,
      ledger: this.deps.ledger,
      env: this.env,
      contextTokens: this.loop.contextTokens(),
      verdicts: this.verdicts,
      sessions: this.deps.sessions(),
      compaction: this.tracker.current,
      agent: { running: this.run !== undefined, streaming: this.streaming, approvals: this.broker.views, waiting: this.wait.view() },
      connection: this.deps.connection(),
      trusted: this.deps.trusted(),
    });
  }

  private onStoreEvent(e: SessionEvent): void {
    if (this.deps.wantsDeltas && !this.deps.wantsDeltas()) {
      this.deps.onStateChange?.();
      return;
    }
    const active = this.store.active();
    const i = active.messages.length - 1;
    if (e.type === 'message' && active.messages[i]?.id === e.message.id) {
      const message = toViewMessage(active.messages[i]!, i, active.origins[i]!, this.deps.ledger);
      const gauge = sessionGauge(this.loop.contextTokens(), this.env);
      // Only the end of `allowed` changes when a message is appended: send that, not the whole list again.
      const split = splitChange(active.messages, sessionSplit(this.store, this.deps.ledger, this.env));
      this.post({ type: 'message-added', message, gauge, split });
    } else {
      // Compaction, undo, pins and focus reshape the whole context (the pinned block sits at the top).
      this.post({ type: 'snapshot', snapshot: this.snapshot() });
    }
    this.deps.onStateChange?.();
  }

  private onAgentEvent(e: AgentEvent): void {
    if (e.type === 'compaction' && e.event.type === 'planned') this.compactions.planned(e.event.compactionId);
    this.postAll(this.tracker.onAgentEvent(e));
    onAgentEvent(controllerAgentEvents, e, this.eventSink);
  }

  // ------------------------------------------------------------ webview messages

  /** A controller on its own (unit tests) answers session-level messages itself. */
  private readonly standalone: SessionOps = {
    showLatest: async () => this.post({ type: 'snapshot', snapshot: this.snapshot() }),
    // The host owns the session list.
    newSession: async () => undefined,
    switchTo: async () => undefined,
    beforeSend: async () => undefined,
    // No editor area without the host.
    openReview: async () => undefined,
  };

  /** Handles one (already validated) webview message through the host's dispatch table. */
  async handle(msg: WebviewToHost): Promise<void> {
    await dispatchWebview({ controller: () => this, session: this.standalone }, msg);
  }

  async send(text: string): Promise<void> {
    const slash = parseSlashCommand(text);
    if (slash?.command === 'compact') return this.compact(slash.focus, null);
    if (slash?.command === 'unknown')
      return this.notice('warning', `Unknown command /${slash.name}. Available: /compact "what must survive".`);
    if (!text.trim()) return;
    if (this.run) return this.notice('warning', 'The agent is still working on the last message. Wait for it, or press Stop.');
    this.postAll(this.tracker.clearIfDone());
    const abort = new AbortController();
    const started = elapsedNow(this.deps.clock);
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
      this.wait.endSilently();
      resolveDone();
      this.deps.log.info(`[${this.store.id}] turn took ${elapsedNow(this.deps.clock) - started} ms`);
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

  /** `/compact` and the view's Compact button (see UserCompactions.compact). */
  compact(focus: string | null, tailStartIndex: number | null): Promise<void> {
    return this.compactions.compact(focus, tailStartIndex);
  }

  undo(): Promise<void> {
    return this.compactions.undo();
  }

  setStrategy(strategy: SplitpointSettings['strategy']): void {
    this.deps.setStrategy(strategy);
  }

  approve(callId: string): void {
    if (!this.broker.approve(callId)) this.notice('warning', 'That approval is no longer open.');
  }

  clearFocus(): Promise<void> {
    return this.loop.clearFocus();
  }

  expand(summaryId: string): void {
    const active = this.store.active();
    if (!active.compaction || active.compaction.summary.id !== summaryId)
      return this.notice('warning', 'That summary is not in force any more.');
    const all = this.store.snapshot.messages;
    const position = new Map(all.map((m, i) => [m.id, i]));
    // Archived originals carry their position in the full log, not in the active context.
    const messages = this.store.summarised().map((m) => toViewMessage(m, position.get(m.id)!, 'summary', this.deps.ledger));
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
    this.compactions.dropOwned();
    this.deltas.flush();
    this.disposed = true;
    for (const d of this.disposers) d();
    await this.store.close(); // frees the writer lock for the CLI or another window
  }
}
