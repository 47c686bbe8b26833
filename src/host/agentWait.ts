import type { AgentWaitView } from '../protocol/messages';

/**
 * What the running agent waits on while no reply text streams, and since when. Told of every agent event that can
 * change it (agentEventLog.ts); answers with the view message only when it changed, so a streamed token costs a
 * comparison.
 */
export class AgentWait {
  private on: AgentWaitView['on'] | null = null;
  private detail: string | null = null;
  private since = 0;

  constructor(private readonly now: () => number) {}

  /** The new state, or undefined when it is the same as before. */
  set(on: AgentWaitView['on'] | null, detail: string | null = null): AgentWaitView | null | undefined {
    if (on === null) detail = null;
    if (on === this.on && detail === this.detail) return undefined;
    this.on = on;
    this.detail = detail;
    this.since = this.now();
    return this.view();
  }

  view(): AgentWaitView | null {
    return this.on === null ? null : { on: this.on, detail: this.detail, elapsedMs: this.now() - this.since };
  }
}
