import type { AgentLoop } from '../core/agent/agentLoop';
import { planSessionCompaction } from '../core/agent/compactionRunner';
import { adoptPlanned } from '../core/agent/planBase';
import type { PendingCompaction } from '../core/compaction/pendingCompaction';
import type { ToolSpec } from '../core/ports';
import type { SessionStore } from '../core/session/sessionStore';
import type { Clock, IdSource } from '../core/session/storage';
import type { TokenLedger } from '../core/tokens/tokenLedger';
import type { HostToWebview } from '../protocol/messages';
import { agentSettingsFrom } from './agentSettings';
import type { CompactionTracker } from './compactionTracker';
import type { HostLog } from './log';
import type { ControllerEnvironment } from './controllerEnvironment';

export interface UserCompactionDeps {
  store: SessionStore;
  ledger: TokenLedger;
  tracker: CompactionTracker;
  clock: Clock;
  ids: IdSource;
  log: HostLog;
  /** The loop and the environment are rebuilt when settings change: read them each time. */
  loop(): AgentLoop;
  env(): ControllerEnvironment;
  tools(): readonly ToolSpec[];
  /** Whether a turn runs, and how to stop it (a synchronous compaction runs on the turn's signal). */
  running(): boolean;
  stop(): Promise<void>;
  post(msgs: HostToWebview[]): void;
  notice(level: 'info' | 'warning' | 'error', text: string): void;
  /** Asks before the user's work is thrown away; false: keep it. */
  confirm(message: string, action: string): Promise<boolean>;
  /** Whether anyone sees a compaction's progress now (its workers' streams are read less often when not). */
  watched?: () => boolean;
}

/** What a new compaction would throw away of the one the user owns: its written and edited blocks (none: nothing to ask). */
function workLost(p: PendingCompaction): string | undefined {
  const done = p.blocks.filter((b) => b.status === 'done').length;
  const edited = p.blocks.filter((b) => b.status === 'edited').length;
  if (done + edited === 0) return undefined;
  return `${done + edited} of ${p.blocks.length} block summaries${edited > 0 ? `, ${edited} edited by you,` : ''}`;
}

const TAKEN = 'The summary made while the agent was idle is ready: adopt it, edit or regenerate blocks, or cancel it.';
const JUDGING = 'The judge is checking the summary made while the agent was idle against your message; it is adopted if it passes.';

/**
 * The compactions the user steers from the view: `/compact` previews, a
 * background result the loop held, and what the user does with them (edit,
 * regenerate, adopt, cancel, undo).
 */
export class UserCompactions {
  /** The compaction the user steers: their /compact preview, or a background result the loop held. */
  private owned: PendingCompaction | undefined;
  /** The loop's current background pending, recorded so a held result can be handed to the user. */
  private lastBackground: PendingCompaction | undefined;
  /** A held summary being handed to the user (takeHeld). */
  private taking: Promise<PendingCompaction | undefined> | undefined;
  /** Moves whenever the owned preview is dropped: a /compact that awaited the server load then gives way. */
  private generation = 0;

  constructor(private readonly d: UserCompactionDeps) {}

  /** The loop planned a compaction: remember a background one, in case it is held and handed over. */
  planned(compactionId: string): void {
    const bg = this.d.loop().backgroundCompaction;
    if (bg && bg.pending.id === compactionId) this.lastBackground = bg.pending;
  }

  /** The loop let go of a held background result (terminal hold): the user may still adopt, edit or cancel it. */
  held(compactionId: string): void {
    if (!this.d.loop().backgroundCompaction && this.lastBackground?.id === compactionId) {
      // It takes the view's place: a preview of the user's own still running would go on unseen.
      if (this.owned && this.owned.id !== compactionId) this.dropOwned();
      this.owned = this.lastBackground;
      this.d.tracker.adoptAsPreview();
    }
  }

  /**
   * A new compaction replaces the open one the user owns: its written (and edited) summaries would be lost, and
   * "Compact here" beside a ready preview did that without a word. Asked once, in a modal.
   */
  private async mayReplace(lost: string, tailStartIndex: number | null): Promise<boolean> {
    const where = tailStartIndex === null ? "at the strategy's split" : `at message #${tailStartIndex}`;
    const [asked, before] = [this.owned, this.generation];
    const ok = await this.d.confirm(`Discard the open compaction (${lost}) and plan a new one ${where}?`, 'Discard and Compact');
    // Adopted, cancelled or replaced while the question was open: what was asked about is gone, and so is the request.
    return ok && this.owned === asked && before === this.generation;
  }

  /**
   * `/compact` and the view's Compact button. An auto compaction in flight is
   * superseded with the focus (its unfinished blocks are redone); otherwise
   * the user's compaction is a preview that waits for Adopt. A dragged split
   * replaces whatever runs, since a running compaction cannot move its split.
   */
  async compact(focus: string | null, tailStartIndex: number | null): Promise<void> {
    const { store, log } = this.d;
    const loop = this.d.loop();
    loop.noteUserActivity();
    const f = focus?.trim() ? focus.trim() : undefined;
    if (tailStartIndex === null && (this.taking || loop.backgroundCompaction?.heldForNextMessage)) {
      const before = this.generation;
      const held = await this.offerHeld(f);
      if (held) return this.d.notice('info', held === 'taken' ? TAKEN : JUDGING);
      // Closed or superseded while the loop was asked: this call no longer owns anything.
      if (before !== this.generation) return;
    }
    const bg = loop.backgroundCompaction;
    if (tailStartIndex === null && bg && !bg.outcome && !bg.heldForNextMessage) {
      await loop.userCompact(f, new AbortController().signal);
      if (!f) return this.d.notice('info', 'A background compaction is already running.');
      // Every block already summarised: nothing is redone, and the summary does not claim the focus.
      if (loop.backgroundCompaction?.pending.refocusApplied !== true)
        return this.d.notice(
          'info',
          `The background compaction had already summarised every block, so your focus did not change it. "${f}" is the ` +
            'standing focus for the next compaction; regenerate a block in the review to apply it now.',
        );
      return this.d.notice('info', `The background compaction now uses your focus: "${f}".`);
    }
    if (tailStartIndex === null && f !== undefined && this.owned && this.d.tracker.isPreview && !this.owned.isComplete()) {
      // A new focus while the preview still runs: redo its unfinished blocks with it.
      await store.setFocus(f);
      void this.owned.refocus(f).catch(() => undefined);
      return;
    }
    // Awaited only when there is something to ask: a close right after the call must still find the generation below.
    const lost = this.owned && !this.owned.isCancelled ? workLost(this.owned) : undefined;
    if (lost && !(await this.mayReplace(lost, tailStartIndex))) return this.d.notice('info', 'The open compaction is kept.');
    // Workers of ours that this call cancels are still on the server for a step or more: a reading now would count
    // them as someone else's. The latest reading was taken while none of ours ran (ServerLoadMonitor.refreshSoon).
    const replacing = (bg !== undefined && !bg.outcome) || this.owned !== undefined;
    if (bg && !bg.outcome) loop.cancelCompaction();
    this.dropOwned();
    const generation = this.generation;
    const env = this.d.env();
    if (f !== undefined && f !== store.snapshot.focus) await store.setFocus(f);
    const serverLoad = replacing ? env.serverLoad?.latest() : await env.serverLoad?.read();
    // A later /compact, a cancel or the session's closing while this one waited: it no longer owns the preview.
    if (generation !== this.generation) return;
    const standing = store.snapshot.focus ?? undefined;
    const settings = agentSettingsFrom(env.settings, env.contextWindow);
    const choice = tailStartIndex === null ? { strategy: env.settings.strategy } : { manualIndex: tailStartIndex };
    const { snapshot, pending } = planSessionCompaction(
      { ...this.d, compactor: env.compactor, compactorLimiter: env.compactorLimiter, replicas: env.replicas, profile: env.profile },
      choice,
      this.d.tools(),
      { ...settings.compaction, focus: standing, ...(serverLoad ? { serverLoad } : {}) },
      settings.replyReserve,
    );
    if (pending.plan.blocks.length === 0) {
      const why = tailStartIndex === null ? `the ${env.settings.strategy} split keeps the whole conversation.` : 'before that split point.';
      return this.d.notice('info', tailStartIndex === null ? `Nothing to compact: ${why}` : `Nothing to compact ${why}`);
    }
    this.owned = pending;
    this.d.post(this.d.tracker.start(pending.id, false, standing, true));
    pending.on((e) => {
      this.d.post(this.d.tracker.onCompactionEvent(e));
      if (e.type !== 'ready') return;
      const t = e.totals;
      const stats = `${t.wallMs} ms (${t.requests} requests, ${t.cachedTokens ?? 'unknown'} cached)`;
      log.info(`[${store.id}] preview ${e.compactionId} ready: ${t.headTokens} → ${t.summaryTokens} tokens in ${stats}`);
    });
    const plan = pending.plan;
    log.info(
      `[${store.id}] preview ${pending.id}: ${plan.blocks.length} blocks, ${plan.headTokens} head tokens, split at ${snapshot.split.tailStartIndex}`,
    );
    await pending.start();
    if (!pending.isCancelled && !pending.isComplete()) {
      const failed = pending.blocks.filter((b) => b.status === 'failed');
      if (failed.length > 0) {
        const n = failed.length;
        this.d.notice(
          'warning',
          `${n} block${n > 1 ? 's' : ''} failed (${failed[0]!.error}). Regenerate ${n > 1 ? 'them' : 'it'}, edit the text, or cancel.`,
        );
      }
    }
  }

  /**
   * A summary made while the agent was idle and held for the next message is already what /compact would make: with
   * no focus or its own, the user reviews it now ('taken'). With another focus it is redone as a new preview
   * (undefined: the caller goes on). Once a message has come the judge decides on it: no second compaction meanwhile.
   */
  private async offerHeld(f: string | undefined): Promise<'taken' | 'judging' | undefined> {
    const bg = this.d.loop().backgroundCompaction;
    if (!this.taking && bg?.releasable && f !== undefined && f !== bg.pending.currentFocus) return undefined;
    if (await this.takeHeld()) return 'taken';
    return this.d.loop().backgroundCompaction?.heldForNextMessage ? 'judging' : undefined;
  }

  /**
   * The loop's held summary becomes the user's preview (held() takes it as the loop lets it go); undefined when the
   * judge began on a message first. One at a time: a second caller meanwhile gets the first one's result.
   */
  private takeHeld(): Promise<PendingCompaction | undefined> {
    this.taking ??= this.releaseToUser().finally(() => (this.taking = undefined));
    return this.taking;
  }

  private async releaseToUser(): Promise<PendingCompaction | undefined> {
    const bg = this.d.loop().backgroundCompaction;
    if (!bg?.releasable || !(await this.d.loop().releaseHeldCompaction())) return undefined;
    return this.owned?.id === bg.pending.id ? this.owned : undefined;
  }

  /** The user steers a compaction of their own, shown now (the idle trigger leaves them to it). */
  get ownsPreview(): boolean {
    return this.owned !== undefined && this.d.tracker.owns(this.owned.id) && this.d.tracker.isPreview;
  }

  /** The user's compaction by id; a held background summary the user edits becomes theirs (not judged). */
  private async ownedFor(compactionId: string): Promise<PendingCompaction | undefined> {
    if (this.owned && this.owned.id === compactionId) return this.owned;
    if (this.taking || this.d.loop().backgroundCompaction?.pending.id === compactionId) await this.takeHeld();
    if (this.owned?.id === compactionId) return this.owned;
    // Read again: taking it waited for the loop.
    const bg = this.d.loop().backgroundCompaction;
    if (bg?.pending.id === compactionId && bg.heldForNextMessage) {
      this.d.notice('info', JUDGING);
      return undefined;
    }
    const background = bg?.pending.id === compactionId;
    this.d.notice(
      'warning',
      background
        ? 'This compaction runs in the background and is checked by the judge; cancel it, or use /compact "focus" to steer it.'
        : 'That compaction is no longer open.',
    );
    return undefined;
  }

  async editBlock(id: string, block: number, text: string): Promise<void> {
    const p = await this.ownedFor(id);
    if (!p) return;
    if (!text.trim()) return this.d.notice('warning', 'A block summary cannot be empty; regenerate it instead.');
    // Counted as the context's messages are, so the side bar shows the text's size, not a guess from its length.
    this.d.tracker.expectEdit(p.id, block, text, this.d.ledger.countText(text));
    try {
      p.edit(block, text);
    } catch (err) {
      return this.d.notice('error', (err as Error).message);
    }
  }

  async regenerateBlock(id: string, block: number, focus?: string): Promise<void> {
    const p = await this.ownedFor(id);
    if (!p) return;
    try {
      await p.regenerate(block, focus);
    } catch (err) {
      this.d.notice('error', (err as Error).message);
    }
  }

  async adopt(id: string): Promise<void> {
    const loop = this.d.loop();
    loop.noteUserActivity();
    const bg = loop.backgroundCompaction;
    // A background summary held for the next message may be adopted by hand; the loop then lets it go.
    const p = this.owned?.id === id ? this.owned : bg && bg.pending.id === id && bg.heldForNextMessage ? bg.pending : undefined;
    if (!p) return this.d.notice('warning', 'That compaction cannot be adopted now (it is not finished, or it is no longer open).');
    if (!p.isComplete())
      return this.d.notice('warning', 'Not every block has a summary yet: wait, regenerate the failed ones, or edit them.');
    const before = loop.contextTokens();
    try {
      await adoptPlanned(p, this.d.store);
    } catch (err) {
      return this.d.notice('error', (err as Error).message);
    }
    if (p !== this.owned) loop.cancelCompaction();
    this.owned = undefined;
    const after = loop.contextTokens();
    this.d.log.info(`[${this.d.store.id}] adopted ${id} by hand: ${before} → ${after} tokens`);
    const n = (t: number): string => t.toLocaleString('en-US');
    this.d.notice('info', `Compacted: ${n(before)} → ${n(after)} tokens. Undo compaction restores the originals.`);
  }

  async cancel(id: string): Promise<void> {
    // The user just turned a compaction down: the idle trigger does not offer another one a minute later.
    const loop = this.d.loop();
    loop.noteUserActivity();
    if (this.owned?.id === id) return this.dropOwned();
    const bg = loop.backgroundCompaction;
    if (bg && bg.pending.id === id) return loop.cancelCompaction();
    if (!this.d.tracker.owns(id) || !this.d.tracker.isActive) return;
    if (this.d.running()) {
      // The loop's synchronous compaction runs on the turn's signal: stopping is the only way to cancel it.
      this.d.notice('info', 'This compaction is part of the running turn; stopping the agent.');
      return this.d.stop();
    }
    // The synchronous compaction a twice-rejected background summary fell back to while the agent was idle.
    loop.cancelCompaction();
  }

  async undo(): Promise<void> {
    const store = this.d.store;
    if (store.snapshot.compactions.length === 0) return this.d.notice('info', 'There is no compaction to undo.');
    // A compaction in flight was planned on the context being undone.
    this.d.loop().cancelCompaction();
    this.dropOwned();
    try {
      const undone = await store.undoCompaction();
      // The panel would still say "adopted" of the compaction just undone.
      this.d.post(this.d.tracker.clearIfDone());
      this.d.log.info(`[${store.id}] undid compaction ${undone.id}`);
      this.d.notice('info', `Undid the last compaction; ${store.snapshot.compactions.length} still in force.`);
    } catch (err) {
      this.d.notice('error', (err as Error).message);
    }
  }

  /** Cancels the user's compaction, if any (session closed, superseded). */
  dropOwned(): void {
    this.owned?.cancel();
    this.owned = undefined;
    this.generation++;
  }
}
