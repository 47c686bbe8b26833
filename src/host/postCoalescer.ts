import type { HostToWebview } from '../protocol/messages';

/**
 * Joins what arrives in bursts into one webview message per burst: the
 * agent's text deltas, and the streaming progress of compaction workers. The
 * transport hands streams on in batches on one clock that all streams share
 * (pacedFetch.ts), so one turn of the event loop brings several deltas of the
 * agent's reply, or a progress step from each running worker (up to 64).
 * Posting each on its own would serialise and cross the webview boundary once
 * per token or per worker, and make the webview repaint as often.
 *
 * What is pending goes out in the next check phase (each paced stream ends its
 * batch in its own setImmediate callback of the current one, so the burst is
 * over by then) or before any other message, so the webview sees everything
 * in the order it happened. Only one kind is pending at a time: text and
 * progress alternate in the order they came.
 */
export class PostCoalescer {
  private text = '';
  private progress: { compactionId: string; tokens: Map<number, number> } | undefined;
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly send: (msg: HostToWebview) => void) {}

  delta(text: string): void {
    if (this.progress) this.flush();
    this.text += text;
    this.schedule();
  }

  /** Drops reply text not sent yet (the reply it belongs to is void). */
  discardText(): void {
    this.text = '';
  }

  post(msg: HostToWebview): void {
    if (msg.type !== 'block-progress') {
      this.flush();
      this.send(msg);
      return;
    }
    if (this.text.length > 0 || (this.progress && this.progress.compactionId !== msg.compactionId)) this.flush();
    this.progress ??= { compactionId: msg.compactionId, tokens: new Map() };
    for (const p of msg.progress) this.progress.tokens.set(p.index, p.streamedTokens);
    this.schedule();
  }

  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.text.length > 0) {
      const text = this.text;
      this.text = '';
      this.send({ type: 'assistant-delta', text });
    }
    const p = this.progress;
    if (p) {
      this.progress = undefined;
      const progress = [...p.tokens].map(([index, streamedTokens]) => ({ index, streamedTokens }));
      this.send({ type: 'block-progress', compactionId: p.compactionId, progress });
    }
  }

  private schedule(): void {
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.flush();
    });
  }
}
