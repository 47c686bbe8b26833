import type { HostToWebview, HostToWebviewPost } from '../protocol/messages';

/**
 * Sends what the host posts to a webview in one message per turn of the
 * event loop. A compaction posts in bursts: its start, its plan and every
 * block's "queued" in one turn (29 messages for 27 blocks), a block's result
 * in the turn whose stream batch finished it, beside that batch's progress.
 * Each webview.postMessage is a round trip through VS Code's RPC (serialised,
 * answered, and in a remote window compressed) and a message event in the
 * page; one per burst does the same work once. The order is kept: everything
 * goes through the one queue, and a lone message goes as it is.
 */
export class PostBatcher {
  private queue: HostToWebview[] = [];
  private scheduled = false;

  constructor(
    private readonly send: (post: HostToWebviewPost) => void,
    private readonly schedule: (run: () => void) => void = (run) => void setImmediate(run),
  ) {}

  post(msg: HostToWebview): void {
    this.queue.push(msg);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  /** Sends what is queued now (the scheduled turn calls it; so may a caller that must not wait). */
  flush(): void {
    this.scheduled = false;
    const q = this.queue;
    if (q.length === 0) return;
    this.queue = [];
    this.send(q.length === 1 ? q[0]! : { type: 'batch', messages: q });
  }
}
