import type { AgentWaitView, CompactingDetail } from '../protocol/messages';
import type { AgentEventSink } from './agentEventLog';

export interface AgentWaitOptions {
  now: () => number;
  /** Posts a change to the view. */
  post: (waiting: AgentWaitView | null) => void;
  /** A turn runs (a background compaction's events also come while the agent is idle). */
  inTurn: () => boolean;
  /** Reply text is streaming, which the view shows instead of any wait. */
  replyStreaming: () => boolean;
}

/**
 * What the running agent waits on while no reply text streams, and since when. Told of every agent event that can
 * change it (agentEventLog.ts); posts only a change, so a streamed token costs a comparison.
 */
export class AgentWait {
  private on: AgentWaitView['on'] | null = null;
  private detail: string | null = null;
  private since = 0;
  /** The compaction a wait for one is on ('now', 'verdict', 'amending'): only its end sends the turn back to the model. */
  private compactionId: string | undefined;

  constructor(private readonly o: AgentWaitOptions) {}

  update(on: AgentWaitView['on'] | null, detail: string | null = null): void {
    if (on === null) detail = null;
    // No change first: this runs for every reasoning token.
    if (on === this.on && detail === this.detail) return;
    if (!this.o.inTurn() || (on !== null && this.o.replyStreaming())) return;
    this.on = on;
    this.detail = detail;
    this.since = this.o.now();
    this.compactionId = undefined;
    this.o.post(this.view());
  }

  /**
   * The turn stops for a compaction: one the loop runs before it goes on ('now': reactive, block, fallback), or the
   * judge's check of a summary held while the agent was idle ('verdict').
   */
  compacting(compactionId: string, detail: CompactingDetail = 'now'): void {
    this.update('compaction', detail);
    if (this.on === 'compaction') this.compactionId = compactionId;
  }

  /** The judge rejected the summary the turn waits on: the turn now waits on its rewrite, a compaction of its own. */
  amending(compactionId: string, rewriteId: string): void {
    if (this.on === 'compaction' && this.compactionId === compactionId) this.compacting(rewriteId, 'amending');
  }

  /** That compaction ended: the turn waits on the model again (a request retried after one has no step-started). */
  compactionEnded(compactionId: string): void {
    if (this.on === 'compaction' && this.compactionId === compactionId) this.update('model');
  }

  /**
   * Ended where the view ends it itself: at the turn's end (agent-state) and at the reply's first text (a post here
   * would split the transport's first batch of deltas in two).
   */
  endSilently(): void {
    this.on = null;
    this.detail = null;
  }

  view(): AgentWaitView | null {
    return this.on === null ? null : { on: this.on, detail: this.detail, elapsedMs: this.o.now() - this.since };
  }
}

/** The agent-event sink's part that drives a wait (agentEventLog.ts). */
export function waitSink(w: AgentWait): Pick<AgentEventSink, 'waiting' | 'compacting' | 'amending' | 'compactionEnded'> {
  return {
    waiting: (on, detail) => w.update(on, detail ?? null),
    compacting: (id, detail) => w.compacting(id, detail),
    amending: (id, rewriteId) => w.amending(id, rewriteId),
    compactionEnded: (id) => w.compactionEnded(id),
  };
}
