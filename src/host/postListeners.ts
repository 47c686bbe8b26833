import type { HostToWebview } from '../protocol/messages';

/**
 * Who listens to what the host posts to the side bar (the review editor, the
 * test API), and whether any of them shows it to someone: a listener counts as
 * watching (the host then builds deltas and reads workers' streams as for a
 * visible view) unless it says it does not, as a benchmark of the hidden view.
 */
export class PostListeners {
  private readonly listeners = new Map<(msg: HostToWebview) => void, boolean>();
  private watchers = 0;

  /** Whether a listener that watches is subscribed. */
  get watched(): boolean {
    return this.watchers > 0;
  }

  emit(msg: HostToWebview): void {
    for (const l of this.listeners.keys()) l(msg);
  }

  /** Subscribes `listener`; the function returned unsubscribes it. */
  add(listener: (msg: HostToWebview) => void, watches: boolean): () => void {
    if (this.listeners.has(listener)) throw new Error('onDidPost: this listener is already subscribed');
    this.listeners.set(listener, watches);
    if (watches) this.watchers++;
    return () => {
      if (this.listeners.delete(listener) && watches) this.watchers--;
    };
  }
}
