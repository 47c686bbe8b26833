import { describeLoads } from '../core/perf/serverLoad';
import type { AgentEvent, AgentEventTable } from '../core/agent/events';
import { onAgentEvent } from '../core/agent/events';
import type { CompactionEvent, PlanChoice, PlanOption } from '../core/compaction/events';
import type { PinItem } from '../core/session/schema';
import type {
  CompactionPlanView,
  CompactionState,
  CompactionView,
  HostToWebview,
  LossHeadlineView,
  PlanOptionView,
} from '../protocol/messages';
import { isSettled } from '../protocol/messages';
import { adoptedNote, blockView, checksView, statsView, totalsView, verdictView } from './viewModel';
import { indexMove, shiftedView, type ContextRef, type IndexMove } from './contextShift';

/**
 * Builds the one CompactionView the webview shows from the engine's events,
 * and says which protocol deltas each event causes. Event-sourced on purpose:
 * synchronous compactions inside the agent loop (block, reactive, fallback)
 * expose no object to poll, only events, and the same path then serves the
 * background run and the user's preview alike.
 */
export interface TrackerOptions {
  /** Pins at the time, to name missing ones in the checks. */
  pins: () => readonly PinItem[];
  /** Whether background results go to the judge (then "ready" means "judging"). */
  judgeEnabled: () => boolean;
  /** The loss report in brief for a compaction whose blocks all have summaries. */
  loss?: (view: CompactionView) => LossHeadlineView | null;
  /** The loss report threw: the compaction goes on to ready without one (none is shown rather than a wrong one). */
  lossFailed?: (err: unknown) => void;
  /**
   * Whether anyone sees the deltas now (the side bar is visible). When not, the loss report, the costliest part of a
   * finished compaction (~15 ms and a few MB on a long head), waits for the next snapshot: a background compaction
   * while the side bar is hidden may be adopted or replaced before anyone looks.
   */
  wantsDeltas?: () => boolean;
  /** The active context now: a compaction started now indexes it; later, its blocks move with their messages. */
  context?: () => ContextRef;
  /**
   * Local token counts as the server would count them (TokenLedger.calibrated): the chat, timeline and gauges show
   * calibrated counts, and the workers' output tokens are the server's, so the head and block sizes shown beside them
   * must be too. Identity when absent.
   */
  calibrated?: (localTokens: number) => number;
}

const TERMINAL: ReadonlySet<CompactionState> = new Set(['adopted', 'cancelled', 'failed']);

export class CompactionTracker {
  private view: CompactionView | null = null;
  /** Compaction ids that belong to the shown view (a targeted update runs under a new id). */
  private ids = new Set<string>();
  /** True while the shown compaction is the user's preview, which waits for Adopt. */
  private preview = false;
  /** The loss report is due but was left for the next snapshot (no view saw the delta). */
  private lossDue = false;
  /** The pins the loss report was judged with: a pin added since keeps facts, so the report is judged again. */
  private lossPins: string | undefined;
  /** The preview stopped with failed blocks: shown as held for the user (regenerate, edit or cancel), not running. */
  private stalled = false;
  /** The host's count of a text about to be put in a block by hand (see expectEdit). */
  private editCount: { compactionId: string; block: number; text: string; tokens: number } | undefined;
  /** The active context the shown compaction started on (its block indices are into it). */
  private startedOn: { version: string; ids: readonly string[] } | undefined;
  /** How its indices move in the context of `version` (one map per context change, not one per block event). */
  private move: { version: string; move: IndexMove } | undefined;

  constructor(private readonly o: TrackerOptions) {}

  /** The view as a snapshot shows it, its loss report computed if it was left for now. */
  get current(): CompactionView | null {
    const v = this.view;
    // Every snapshot after a pin change comes here (the pinned block reshapes the context): the report follows it.
    const pinsMoved = v !== null && v.totals !== null && this.lossPins !== pinsKey(this.o.pins());
    if (v && (this.lossDue || pinsMoved)) {
      this.lossDue = false;
      if (!TERMINAL.has(v.state)) v.loss = this.lossOf(v);
    }
    return v && this.shown(v);
  }

  private lossOf(view: CompactionView): LossHeadlineView | null {
    // Recorded before the call: a report that throws is not tried again on every snapshot.
    this.lossPins = pinsKey(this.o.pins());
    try {
      return this.o.loss?.(this.shown(view)) ?? null;
    } catch (err) {
      this.o.lossFailed?.(err);
      return null;
    }
  }

  get isPreview(): boolean {
    return this.preview && this.view !== null && !TERMINAL.has(this.view.state);
  }

  /** Whether an event or id refers to the shown compaction. */
  owns(compactionId: string): boolean {
    return this.ids.has(compactionId);
  }

  get isActive(): boolean {
    return this.view !== null && !TERMINAL.has(this.view.state);
  }

  /** Starts showing a compaction. */
  start(compactionId: string, background: boolean, focus: string | undefined, preview: boolean): HostToWebview[] {
    this.ids = new Set([compactionId]);
    this.preview = preview;
    this.lossDue = false;
    this.stalled = false;
    const empty = { blocks: [], headTokens: 0, totals: null, checks: null, verdict: null, note: null };
    this.view = { id: compactionId, background, focus: focus ?? null, state: 'running', ...empty };
    const ctx = this.o.context?.();
    this.startedOn = ctx && { version: ctx.version, ids: ctx.ids() };
    this.move = undefined;
    if (ctx) this.view.version = ctx.version;
    return [this.snapshotMsg()];
  }

  /** The loop let go of a held background result: from now on the user adopts, edits or cancels it. */
  adoptAsPreview(): void {
    this.preview = true;
  }

  /** Forgets a finished compaction (e.g. when the next message is sent). */
  clearIfDone(): HostToWebview[] {
    if (!this.view || !TERMINAL.has(this.view.state)) return [];
    this.view = null;
    this.ids.clear();
    this.preview = false;
    this.lossDue = false;
    this.stalled = false;
    return [{ type: 'compaction', compaction: null }];
  }

  private snapshotMsg(): HostToWebview {
    return { type: 'compaction', compaction: this.view ? structuredClone(this.shown(this.view)) : null };
  }

  /** The view with its blocks at their messages' indices now (see contextShift.ts). */
  private shown(v: CompactionView): CompactionView {
    const then = this.startedOn;
    const now = this.o.context?.();
    if (!then || !now || now.version === then.version) return v;
    if (this.move?.version !== now.version) this.move = { version: now.version, move: indexMove(then.ids, now.ids()) };
    return shiftedView(v, then.ids.length, now, this.move.move);
  }

  /** Totals, checks and the loss report no longer hold (a new plan, a retried or edited block): they are computed again at ready. */
  private clearResults(v: CompactionView): void {
    v.totals = null;
    v.checks = null;
    v.loss = null;
    this.lossDue = false;
  }

  /** Totals for the view: the merged summary's local count calibrated, like the head (the ratio is unchanged). */
  private totals(t: Parameters<typeof totalsView>[0]): NonNullable<CompactionView['totals']> {
    const v = totalsView(t);
    return this.o.calibrated ? { ...v, summaryTokens: this.o.calibrated(v.summaryTokens) } : v;
  }

  private set(state: CompactionState, note?: string | null): HostToWebview[] {
    if (!this.view) return [];
    this.view.state = state;
    if (note !== undefined) this.view.note = note;
    return [this.snapshotMsg()];
  }

  /** Every block has a summary: totals, checks and the state that follows. */
  private completed(
    compactionId: string,
    totals: Parameters<typeof totalsView>[0],
    checks: Parameters<typeof checksView>[0],
  ): HostToWebview[] {
    if (!this.view || !this.owns(compactionId)) return [];
    this.view.totals = this.totals(totals);
    this.view.checks = checksView(checks, this.o.pins());
    this.lossDue = this.o.wantsDeltas?.() === false;
    this.view.loss = this.lossDue ? null : this.lossOf(this.view);
    if (this.stalled) {
      this.resume(this.view);
      this.view.state = 'running';
    }
    if (this.view.state === 'running')
      this.view.state = this.preview || !this.view.background ? 'ready' : this.o.judgeEnabled() ? 'judging' : 'ready';
    return [this.snapshotMsg()];
  }

  /**
   * A preview whose blocks have all stopped, some failed, waits on the user: nothing retries it, so it is held for
   * their choice, not shown as running (which also kept Undo and Compact here disabled). A background run retries its
   * failed blocks itself and says when it gives up (compaction-failed), so its failures alone do not end it here.
   */
  private stallIfStuck(v: CompactionView): HostToWebview[] {
    if (!this.preview || TERMINAL.has(v.state)) return [];
    const failed = v.blocks.filter((b) => b.status === 'failed');
    if (failed.length === 0 || !v.blocks.every((b) => isSettled(b) || b.status === 'failed')) return [];
    this.stalled = true;
    const n = failed.length;
    v.state = 'held';
    v.note = `${n} of ${v.blocks.length} blocks failed (${failed[0]!.error}). Regenerate ${n > 1 ? 'them' : 'it'}, edit the text, or cancel.`;
    return [this.snapshotMsg()];
  }

  /** Leaves the hold of failed blocks: its note asked for a choice now made. */
  private resume(v: CompactionView): void {
    if (!this.stalled) return;
    this.stalled = false;
    v.note = null;
  }

  /**
   * The host counted a text the user is about to put in a block (the session's own counter, local tokens): its
   * block-edited event then shows that count, calibrated like the workers' server counts beside it, not a chars/4 guess.
   */
  expectEdit(compactionId: string, block: number, text: string, localTokens: number): void {
    this.editCount = { compactionId, block, text, tokens: localTokens };
  }

  onCompactionEvent(e: CompactionEvent): HostToWebview[] {
    const v = this.view;
    if (!v) return [];
    if (e.type === 'planned') {
      // A targeted update (or the loop's synchronous run) continues the view under a new id.
      if (!this.owns(e.compactionId)) {
        if (TERMINAL.has(v.state)) return [];
        this.ids.add(e.compactionId);
        v.id = e.compactionId;
      }
      const cal = this.o.calibrated ?? ((n: number) => n);
      v.blocks = e.blocks.map((b) => ({ ...blockView(b), tokens: cal(b.tokens) }));
      v.headTokens = cal(e.headTokens);
      Object.assign(v, { tailStartIndex: e.tailStartIndex, headingTokens: cal(e.headingTokens) });
      v.plan = e.plan ? planView(e.plan) : null;
      v.focus = e.focus ?? v.focus;
      this.clearResults(v);
      this.resume(v);
      v.state = 'running';
      return [this.snapshotMsg()];
    }
    if (!this.owns(e.compactionId) || e.compactionId !== v.id) return [];
    const block = (i: number) => v.blocks[i];
    const blockMsg = (i: number): HostToWebview[] => {
      const b = block(i);
      return b ? [{ type: 'block', compactionId: v.id, block: structuredClone(this.shown(v).blocks[i] ?? b) }] : [];
    };
    switch (e.type) {
      case 'block-queued': {
        const b = block(e.block);
        if (b) Object.assign(b, { status: 'queued', streamedTokens: 0, error: null });
        return blockMsg(e.block);
      }
      case 'block-streaming': {
        const b = block(e.block);
        if (!b) return [];
        Object.assign(b, { status: 'streaming', streamedTokens: e.outputTokens });
        // Progress only: the post coalescer joins what the workers' batches of one turn bring (postCoalescer.ts).
        return [{ type: 'block-progress', compactionId: v.id, progress: [{ index: e.block, streamedTokens: e.outputTokens }] }];
      }
      case 'block-done': {
        const b = block(e.block);
        if (b) {
          delete b.editedTokens;
          b.status = 'done';
          b.summary = e.summary;
          b.error = null;
          b.streamedTokens = e.stats.outputTokens;
          b.stats = statsView(e.stats);
        }
        // One failed block regenerated while another still waits: held again (all done: 'ready' follows from the core).
        return [...blockMsg(e.block), ...this.stallIfStuck(v)];
      }
      case 'block-failed': {
        const b = block(e.block);
        if (b) Object.assign(b, { status: 'failed', error: e.error });
        return [...blockMsg(e.block), ...this.stallIfStuck(v)];
      }
      case 'block-retried':
        if (TERMINAL.has(v.state) || v.state === 'ready' || v.state === 'judging' || this.stalled) {
          this.resume(v);
          v.state = 'running';
          this.clearResults(v);
          return [this.snapshotMsg(), ...blockMsg(e.block)];
        }
        return blockMsg(e.block);
      case 'block-edited': {
        const b = block(e.block);
        const n = this.editCount;
        this.editCount = undefined;
        if (b) Object.assign(b, { status: 'edited', summary: e.summary, error: null });
        if (b && n?.compactionId === e.compactionId && n.block === e.block && n.text === e.summary)
          b.editedTokens = this.o.calibrated ? this.o.calibrated(n.tokens) : n.tokens;
        else if (b) delete b.editedTokens;
        this.clearResults(v);
        // Another failed block still waits: the note's count changes. The last one edited: 'ready' follows from the core.
        return [...blockMsg(e.block), ...this.stallIfStuck(v)];
      }
      case 'ready':
        if (v.plan) v.plan.measuredMs = e.outcome?.measuredMs ?? e.totals.wallMs;
        return this.completed(e.compactionId, e.totals, e.checks);
      case 'cancelled':
        // The failed blocks' note asks for a choice that no longer exists.
        this.resume(v);
        return this.set('cancelled', v.note ?? 'Cancelled; nothing was adopted.');
      case 'adopted':
        v.totals = this.totals(e.totals);
        return this.set('adopted');
    }
  }

  onAgentEvent(e: AgentEvent): HostToWebview[] {
    return onAgentEvent(CompactionTracker.agentEvents, e, this);
  }

  /** Applies `f` to the shown view when the event belongs to it. */
  private ifOwned(compactionId: string, f: (v: CompactionView) => HostToWebview[]): HostToWebview[] {
    return this.view && this.owns(compactionId) ? f(this.view) : [];
  }

  private static readonly agentEvents: AgentEventTable<CompactionTracker, HostToWebview[]> = {
    'compaction-started': (e, t) => t.start(e.compactionId, e.background, e.focus, false),
    compaction: (e, t) => t.onCompactionEvent(e.event),
    'judge-verdict': (e, t) =>
      t.ifOwned(e.compactionId, (v) => {
        v.verdict = verdictView(e.verdict, e.attempt);
        if (e.verdict.kind === 'error') v.note = `The judge could not score the summary: ${e.verdict.message}`;
        return [t.snapshotMsg()];
      }),
    'compaction-amending': (e, t) =>
      t.ifOwned(e.compactionId, () => t.set('running', `The judge rejected the summary; amending it: ${e.diagnosis}`)),
    'compaction-held': (e, t) => t.ifOwned(e.compactionId, () => t.set('held', e.reason)),
    'compaction-adopted': (e, t) => t.ifOwned(e.compactionId, () => t.set('adopted', adoptedNote(e))),
    'compaction-fallback': (e, t) => t.ifOwned(e.compactionId, () => t.set('failed', `${e.reason}; compacting synchronously instead.`)),
    'compaction-superseded': (e, t) =>
      t.ifOwned(e.compactionId, (v) => {
        v.focus = e.focus ?? null;
        v.note = 'Superseded by your focus: unfinished blocks are redone with it.';
        return [t.snapshotMsg()];
      }),
    'compaction-failed': (e, t) => t.ifOwned(e.compactionId, () => t.set('failed', e.error)),
    // The rest are the conversation's, not the compaction view's.
    'step-started': () => [],
    'assistant-delta': () => [],
    'reply-reset': () => [],
    'reasoning-delta': () => [],
    'assistant-message': () => [],
    'tool-call': () => [],
    'tool-approval': () => [],
    'tool-result': () => [],
    'trigger-fired': () => [],
    'waiting-for-compaction': () => [],
    'judging-held-compaction': (e, t) =>
      t.ifOwned(e.compactionId, () => t.set('judging', 'The judge is checking it against your message.')),
    notice: () => [],
    'window-corrected': () => [],
    error: () => [],
    done: () => [],
  };
}

/** What of the pins the loss report reads: their texts (an edit can add or remove a fact's key). */
function pinsKey(pins: readonly PinItem[]): string {
  return pins.map((p) => `${p.id}\u0000${p.text}`).join('\u0001');
}

function optionView(o: PlanOption): PlanOptionView {
  const { label, mode, layout, blockTokens, blocks, concurrency, summaryTokens, predictedMs } = o;
  return {
    label,
    mode,
    layout,
    blockTokens,
    blocks,
    concurrency,
    summaryTokens,
    predictedMs,
    ...(o.excluded ? { excluded: o.excluded } : {}),
  };
}

/** The planner's choice as the views show it; measured time follows on `ready`. */
export function planView(p: PlanChoice): CompactionPlanView {
  const load = describeLoads(p.serverLoad);
  return {
    chosen: optionView(p.chosen),
    alternatives: p.alternatives.map(optionView),
    profile: `${p.profile.name} (${p.profile.source})`,
    ...(load ? { serverLoad: load } : {}),
    measuredMs: null,
  };
}
