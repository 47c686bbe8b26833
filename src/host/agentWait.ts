import type { AgentWaitView } from '../protocol/messages';

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

  constructor(private readonly o: AgentWaitOptions) {}

  update(on: AgentWaitView['on'] | null, detail: string | null = null): void {
    if (!this.o.inTurn() || (on !== null && this.o.replyStreaming())) return;
    if (on === null) detail = null;
    if (on === this.on && detail === this.detail) return;
    this.on = on;
    this.detail = detail;
    this.since = this.o.now();
    this.o.post(this.view());
  }

  /** A turn that waited on a compaction waits on the model again: a request retried after one has no step-started. */
  compactionEnded(): void {
    if (this.on === 'compaction') this.update('model');
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
