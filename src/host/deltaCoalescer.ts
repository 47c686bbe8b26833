import type { HostToWebview } from '../protocol/messages';

/**
 * Joins the agent's text deltas that arrive in one burst into one webview
 * message. The transport hands a stream on in batches (one per ~100 ms,
 * pacedFetch.ts), each of which becomes several deltas in one turn of the
 * event loop; posting each on its own would serialise and cross the webview
 * boundary once per token. Any other message flushes the pending text first,
 * so the webview sees everything in the order it happened.
 */
export class DeltaCoalescer {
  private text = '';
  private queued = false;

  constructor(private readonly send: (msg: HostToWebview) => void) {}

  delta(text: string): void {
    this.text += text;
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(() => this.flush());
  }

  post(msg: HostToWebview): void {
    this.flush();
    this.send(msg);
  }

  flush(): void {
    this.queued = false;
    if (this.text.length === 0) return;
    const text = this.text;
    this.text = '';
    this.send({ type: 'assistant-delta', text });
  }
}
