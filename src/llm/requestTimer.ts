import { TimeoutError } from './errors';

/**
 * The two clocks of a chat request. The deadline bounds the whole call,
 * retries included, so a server that streams forever still ends. The idle
 * clock runs once the reply has started, at its first event, and is pushed
 * back only by progress (a token, a tool-call piece, the finish): bytes alone,
 * such as SSE keep-alive comments or empty chunks, do not count, so a server
 * that only keeps the connection warm cannot hold the agent. Progress moves a
 * timestamp; the timer is re-armed only when it fires early, so a streamed
 * token costs no timer churn.
 *
 * Not from the response's headers: vLLM sends those before the request is
 * scheduled, and its first event (the role chunk) only with the first token.
 * The silence between is the server's queue and the prompt's prefill, which
 * are not a stall however long they take: a busy shared server's queue, or a
 * long prompt on a small GPU, could pass the idle limit, and a retry would
 * only join the back of the queue again.
 */
export type TimeoutKind = 'deadline' | 'idle';

export class RequestTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private idleMs: number | undefined;
  /** When the idle clock fires; infinite until the reply's first event. */
  private idleAt = Number.POSITIVE_INFINITY;
  private firedKind: TimeoutKind | undefined;

  constructor(
    private readonly deadlineAt: number,
    private readonly deadlineMs: number,
    private readonly onFire: (kind: TimeoutKind) => void,
    // Monotonic: a wall clock stepped forward by the system would fire the idle clock on a reply still streaming.
    private readonly now: () => number = () => performance.now(),
  ) {
    this.schedule();
  }

  /** Which clock ran out, if one did. */
  get fired(): TimeoutKind | undefined {
    return this.firedKind;
  }

  /** A streamed reply: the idle clock, of `ms`, starts at its first event. */
  idleAfterStart(ms: number): void {
    this.idleMs = ms;
  }

  /** The reply's first event arrived. */
  started(): void {
    // Not after stop() or a fired clock: a timer set then would outlive the request.
    if (this.replyStarted || this.idleMs === undefined || this.timer === undefined) return;
    this.idleAt = this.now() + this.idleMs;
    this.schedule();
  }

  private get replyStarted(): boolean {
    return this.idleAt !== Number.POSITIVE_INFINITY;
  }

  /** Real progress: a token or tool-call piece arrived. */
  progress(): void {
    if (this.replyStarted) this.idleAt = this.now() + this.idleMs!;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The error for a fired clock, saying which limit was hit and how to change it. */
  error(url: string): TimeoutError {
    if (this.firedKind === 'idle') {
      return new TimeoutError(
        `The model server at ${url} sent no tokens for ${duration(this.idleMs!)} (keep-alive messages do not count); the request was stopped.`,
        this.idleMs,
        { url },
      );
    }
    // A streamed reply that never began: say what the server was doing, since no stall was seen.
    const notStarted =
      this.idleMs !== undefined && !this.replyStarted
        ? 'The server had not started its reply: it may be queueing the request behind others, or prefilling a long prompt. '
        : '';
    return new TimeoutError(
      `The request to ${url} did not finish within ${duration(this.deadlineMs)}; it was stopped. ${notStarted}` +
        'Raise the limit with --request-timeout SECONDS or the splitpoint.requestTimeoutSeconds setting if replies are legitimately that slow.',
      this.deadlineMs,
      { url },
    );
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const next = Math.min(this.deadlineAt, this.idleAt);
    this.timer = setTimeout(this.check, Math.max(0, next - this.now()));
  }

  private readonly check = (): void => {
    const t = this.now();
    if (t >= this.deadlineAt) this.fire('deadline');
    else if (t >= this.idleAt) this.fire('idle');
    else this.schedule();
  };

  private fire(kind: TimeoutKind): void {
    this.timer = undefined;
    this.firedKind ??= kind;
    this.onFire(kind);
  }
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
