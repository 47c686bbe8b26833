import type { CompactionEvent } from '../compaction/events';
import type { SplitChoice } from '../compaction/fromSession';
import { createCompaction, snapshotSession } from '../compaction/fromSession';
import type { CompactionDeps, PendingCompaction } from '../compaction/pendingCompaction';
import type { WorkerEndpoint } from '../compaction/workerRun';
import { growsText } from '../compaction/compactionOutput';
import type { PerfProfile } from '../perf/profile';
import type { ServerLoad } from '../perf/serverLoad';
import type { CompactionSettings, CompactionSnapshot } from '../compaction/plan';
import type { ChatMessage, StoredMessage } from '../messages';
import type { LimiterPort, ModelPort, ToolSpec } from '../ports';
import type { SessionStore } from '../session/sessionStore';
import type { Clock, IdSource } from '../session/storage';
import type { StrategyName } from '../splitPoint';
import type { TokenLedger } from '../tokens/tokenLedger';
import type { AgentEvent } from './events';
import type { Verdict } from './judge';
import { runJudge } from './judge';
import { compactionBase, recordBase } from './planBase';

export interface CompactionRunnerDeps {
  store: SessionStore;
  ledger: TokenLedger;
  compactor: ModelPort;
  compactorLimiter: LimiterPort;
  judge: ModelPort;
  clock: Clock;
  ids: IdSource;
  emit: (e: AgentEvent) => void;
  /** More compaction endpoints (splitpoint.compaction.endpoints) besides the compactor. */
  replicas?: readonly WorkerEndpoint[];
  /** The planner's profile, read at each compaction so a learned one can refresh; the settings' own profile wins. */
  profile?: () => PerfProfile;
  /** Whether anyone sees a compaction's progress now (CompactionDeps.watched). */
  watched?: () => boolean;
  /**
   * Whether the compactor is the agent's own server (unset: it is). Only then does the agent's prefix sit in its cache
   * and does a background compaction slow the agent's decoding.
   */
  compactorOnAgentServer?: boolean;
  /**
   * Other clients' work on each compaction endpoint, as last read (undefined: not known, or too old). Read when a
   * compaction is planned; the settings' own reading wins (a user's compaction awaits a fresh one).
   */
  serverLoad?: () => readonly (ServerLoad | undefined)[] | undefined;
}

export interface CompactionRunnerSettings {
  strategy: StrategyName;
  compaction: CompactionSettings;
  replyReserve: number;
  judge: { enabled: boolean; threshold: number; model?: string | undefined };
  /** Most a background compaction may slow the agent's decoding; unset = 1.5. */
  maxAgentSlowdown?: number;
}

/** The model side of a compaction, the same for background runs and the user's previews. */
export function compactionDeps(
  d: Pick<CompactionRunnerDeps, 'compactor' | 'compactorLimiter' | 'ledger' | 'clock' | 'ids' | 'replicas' | 'watched'>,
): CompactionDeps {
  const replicas = d.replicas?.length ? { replicas: d.replicas } : {};
  const watched = d.watched ? { watched: d.watched } : {};
  return {
    model: d.compactor,
    limiter: d.compactorLimiter,
    count: (m) => d.ledger.estimate(m),
    clock: d.clock,
    ids: d.ids,
    ...replicas,
    ...watched,
  };
}

/** Freezes the session at `choice` and plans a compaction of it: the one setup every compaction starts from. */
export function planSessionCompaction(
  d: Pick<
    CompactionRunnerDeps,
    'store' | 'compactor' | 'compactorLimiter' | 'ledger' | 'clock' | 'ids' | 'replicas' | 'profile' | 'watched' | 'serverLoad'
  >,
  choice: SplitChoice,
  tools: readonly ToolSpec[],
  given: CompactionSettings,
  replyReserve: number,
): { snapshot: CompactionSnapshot; pending: PendingCompaction } {
  const withProfile = given.profile || !d.profile ? given : { ...given, profile: d.profile() };
  const load = given.serverLoad ?? d.serverLoad?.();
  const settings = load ? { ...withProfile, serverLoad: load } : withProfile;
  const base = compactionBase(d.store);
  const snapshot = snapshotSession(d.store, d.ledger, choice, tools, { contextWindow: settings.contextWindow, replyReserve });
  return { snapshot, pending: recordBase(createCompaction(snapshot, settings, compactionDeps(d)), base) };
}

/** How a background compaction ended. */
export type BackgroundOutcome =
  | { kind: 'accepted'; pending: PendingCompaction; verdict: Verdict | undefined }
  | { kind: 'held'; pending: PendingCompaction; reason: string }
  | { kind: 'fallback'; reason: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'cancelled' };

/** The reason a released summary gives for its hold (see BackgroundCompaction.release). */
export const RELEASED = 'taken for review: adopt it, edit it or cancel it';

const CANCELLED: BackgroundOutcome = { kind: 'cancelled' };

/**
 * One asynchronous compaction (the Slipstream design): compact a snapshot
 * while the agent goes on, then judge the summary against the steps the agent
 * took meanwhile (the next-k trajectory). On reject, one targeted update with
 * the judge's diagnosis, judged again; a second reject asks for the
 * synchronous fallback. The loop adopts an accepted result at a step boundary.
 */
export class BackgroundCompaction {
  readonly snapshot: CompactionSnapshot;
  /** The compactions in force when the snapshot was taken (see planBase). */
  private readonly base: string;
  /** Number of original messages when the snapshot was taken; later ones are the next-k steps. */
  readonly snapshotLength: number;
  private current: PendingCompaction;
  private readonly abort = new AbortController();
  private stepWaiters: (() => void)[] = [];
  private force = false;
  private settledOutcome: BackgroundOutcome | undefined;
  private held = false;
  /** The user took the held summary to review: it is not judged, and the loop lets it go (release()). */
  private released = false;
  private begun = false;
  private settle!: (o: BackgroundOutcome) => void;
  private fail!: (err: unknown) => void;
  readonly done: Promise<BackgroundOutcome>;

  constructor(
    private readonly deps: CompactionRunnerDeps,
    private readonly settings: CompactionRunnerSettings,
    tools: readonly ToolSpec[],
    private readonly focus: string | undefined,
    /** The agent goes on decoding while this runs (a budget trigger mid-turn), not waiting for it or idle. */
    agentBeside: boolean,
  ) {
    const c = settings.compaction;
    const shared = deps.compactorOnAgentServer ?? true;
    // Only an agent decoding on the same server meanwhile is slowed by the workers: then the plan bounds how much. An
    // agent that waits for the compaction, or is idle, is not, and bounding it ruled out the fastest plans.
    const beside = agentBeside && shared ? { background: c.background ?? { maxSlowdown: settings.maxAgentSlowdown ?? 1.5 } } : {};
    const compaction = { ...c, focus, cache: c.cache ?? (shared ? 'warm' : 'cold'), ...beside };
    const first = planSessionCompaction(deps, { strategy: settings.strategy }, tools, compaction, settings.replyReserve);
    this.snapshot = first.snapshot;
    this.base = compactionBase(deps.store);
    this.snapshotLength = deps.store.snapshot.messages.length;
    this.current = this.watch(first.pending);
    this.done = new Promise((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
  }

  /**
   * Announces the compaction (compaction-started), then starts its workers: in that order, since its plan and first
   * block events must reach listeners that learn of it from the announcement (the side bar's tracker).
   */
  begin(background: boolean): void {
    if (this.begun) return;
    this.deps.emit({ type: 'compaction-started', compactionId: this.id, background, focus: this.focus });
    this.start();
  }

  private start(): void {
    if (this.begun) return;
    this.begun = true;
    if (this.abort.signal.aborted) return this.settle((this.settledOutcome = CANCELLED));
    this.pipeline().then((o) => this.settle((this.settledOutcome = o)), this.fail);
  }

  get id(): string {
    return this.current.id;
  }

  get pending(): PendingCompaction {
    return this.current;
  }

  /** Once cancelled it is cancelled, whatever the pipeline settled on: a judge's acceptance not yet applied included. */
  get outcome(): BackgroundOutcome | undefined {
    return this.settledOutcome && this.abort.signal.aborted ? CANCELLED : this.settledOutcome;
  }

  /**
   * True when there is nothing to summarise: the split keeps everything, or
   * the head is only an earlier summary already at the depth cap.
   */
  get empty(): boolean {
    return this.current.plan.blocks.length === 0;
  }

  /** The summary was ready while the agent was idle; it is judged against the next message. */
  get heldForNextMessage(): boolean {
    return this.held && this.settledOutcome === undefined;
  }

  /** Held, and no message has come to judge it against yet: the user may still take it (release()). */
  get releasable(): boolean {
    return this.heldForNextMessage && this.awaitingStep;
  }

  /** Nothing lets the judge begin yet: no step to judge against, not hurried, released or cancelled. */
  private get awaitingStep(): boolean {
    return !this.force && !this.released && !this.abort.signal.aborted && !this.hasNextSteps();
  }

  private create(settings: CompactionSettings): PendingCompaction {
    // A targeted update summarises the same snapshot: it has the same base.
    return this.watch(recordBase(createCompaction(this.snapshot, settings, compactionDeps(this.deps)), this.base));
  }

  private watch(pc: PendingCompaction): PendingCompaction {
    pc.on((e: CompactionEvent) => this.deps.emit({ type: 'compaction', event: e }));
    return pc;
  }

  /** Messages the agent added since the snapshot: the trajectory the judge checks against. */
  nextSteps(): StoredMessage[] {
    return this.deps.store.snapshot.messages.slice(this.snapshotLength);
  }

  private hasNextSteps(): boolean {
    return this.nextSteps().some((m) => m.role === 'assistant' || m.role === 'user');
  }

  /** The loop calls this after each step (and when a user message arrives). */
  notifyStep(): void {
    const w = this.stepWaiters;
    this.stepWaiters = [];
    for (const f of w) f();
  }

  /** The agent must wait now (context at `block`): judge with whatever steps exist. */
  hurry(): void {
    this.force = true;
    this.notifyStep();
  }

  /**
   * The user takes the summary held for the next message to review now: it ends as a terminal hold, which the loop
   * hands to the host (compaction-held) instead of judging it. False when nothing is held, or the judge has begun.
   */
  release(): boolean {
    if (!this.releasable) return false;
    this.released = true;
    this.notifyStep();
    return true;
  }

  /** A new standing focus supersedes this compaction: unfinished blocks are redone with it. */
  refocus(focus: string | undefined): void {
    if (this.settledOutcome) return;
    let redone: Promise<void>;
    try {
      redone = this.current.refocus(focus);
    } catch {
      return;
    }
    // Said only when some block is redone with it: with every block written nothing changes (see refocusApplied).
    if (this.current.refocusApplied) this.deps.emit({ type: 'compaction-superseded', compactionId: this.current.id, focus });
    void redone.catch(() => undefined);
  }

  cancel(): void {
    this.abort.abort();
    this.current.cancel();
    this.notifyStep();
    // Never begun: `done` settles as cancelled, and no worker starts.
    this.start();
  }

  private waitForStep(): Promise<void> {
    return new Promise((resolve) => this.stepWaiters.push(resolve));
  }

  private async pipeline(): Promise<BackgroundOutcome> {
    try {
      await this.current.start();
      if (this.abort.signal.aborted || this.current.isCancelled) return CANCELLED;
      if (!this.current.isComplete()) {
        await this.current.retryFailed();
        if (!this.current.isComplete()) {
          const failed = this.current.blocks.find((b) => b.status === 'failed');
          return { kind: 'failed', reason: failed ? `block ${failed.index}: ${failed.error}` : 'no block finished' };
        }
      }
      // A summary no smaller than what it replaces is never adopted automatically.
      if (this.current.checks().grows) {
        return { kind: 'failed', reason: `${growsText(this.current)}; try larger blocks or a later split` };
      }
      if (!this.settings.judge.enabled) return { kind: 'accepted', pending: this.current, verdict: undefined };
      // The judge needs at least one step after the snapshot: the agent's, or the user's next message.
      // An idle agent has none yet: the summary is held (the UI can preview it) and judged against
      // whatever comes next.
      if (!this.hasNextSteps()) {
        this.held = true;
        const reason = 'no steps since the snapshot yet; it will be judged against the next message';
        this.deps.emit({ type: 'compaction-held', compactionId: this.current.id, reason });
      }
      while (this.awaitingStep) {
        await this.waitForStep();
      }
      if (this.abort.signal.aborted) return CANCELLED;
      if (this.released) return { kind: 'held', pending: this.current, reason: RELEASED };
      const first = await this.judgeNow(1);
      if (first === undefined) return CANCELLED;
      if (first.kind === 'error') return { kind: 'held', pending: this.current, reason: first.message };
      if (first.accepted) return { kind: 'accepted', pending: this.current, verdict: first };
      // Targeted update: the same snapshot, summarised in one pass with the judge's diagnosis beside the earlier summary.
      const rejected = this.current;
      // The diagnosis quotes the conversation: it goes to the worker as fenced data, not into the focus line.
      this.current = this.create({
        ...this.settings.compaction,
        mode: 'sequential',
        focus: rejected.currentFocus,
        amendOf: rejected.summaryText(),
        ...(first.diagnosis.trim() ? { amendNotes: first.diagnosis } : {}),
      });
      // Told before the rewrite's first event, with its id: whatever waits on the rejected summary now waits on it.
      this.deps.emit({ type: 'compaction-amending', compactionId: rejected.id, rewriteId: this.current.id, diagnosis: first.diagnosis });
      await this.current.start();
      if (this.abort.signal.aborted || this.current.isCancelled) return CANCELLED;
      if (!this.current.isComplete()) return { kind: 'fallback', reason: 'the targeted update failed' };
      const second = await this.judgeNow(2);
      if (second === undefined) return CANCELLED;
      if (second.kind === 'error') return { kind: 'held', pending: this.current, reason: second.message };
      if (second.accepted) return { kind: 'accepted', pending: this.current, verdict: second };
      return { kind: 'fallback', reason: `the judge rejected the summary twice (last score ${second.overall}: ${second.diagnosis})` };
    } catch (err) {
      if (this.abort.signal.aborted) return CANCELLED;
      return { kind: 'failed', reason: (err as Error).message };
    }
  }

  private async judgeNow(attempt: number): Promise<Verdict | undefined> {
    let steps: ChatMessage[] = this.nextSteps();
    if (steps.length === 0) {
      // Forced with no steps at all: the forward plan is the newest request in the snapshot.
      const lastUser = [...this.snapshot.context].reverse().find((m) => m.role === 'user' && m.kind === 'normal');
      steps = lastUser ? [lastUser] : [];
    }
    let verdict: Verdict;
    try {
      verdict = await runJudge(this.deps.judge, this.current.summaryText(), steps, this.snapshot.context.length, {
        threshold: this.settings.judge.threshold,
        signal: this.abort.signal,
        modelName: this.settings.judge.model,
      });
    } catch {
      // runJudge throws only when cancelled; a failed judge request is a verdict of kind 'error'.
      return undefined;
    }
    this.deps.emit({ type: 'judge-verdict', compactionId: this.current.id, attempt, verdict, nextSteps: steps.length });
    // Not caught here: a verdict the log could not keep ends the run as failed, with the storage's message, not as
    // a silent cancel that left the panel showing a ready summary nothing would adopt.
    await this.deps.store.recordVerdict(this.current.id, attempt, verdict);
    return verdict;
  }
}
