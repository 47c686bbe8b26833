import { TimeoutError } from './errors';

/**
 * The two clocks of a chat request. The deadline bounds the whole call,
 * retries included, so a server that streams forever still ends. The idle
 * clock runs once the response has started and is pushed back only by
 * progress (a token, a tool-call piece, the finish): bytes alone, such as SSE
 * keep-alive comments or empty chunks, do not count, so a server that only
 * keeps the connection warm cannot hold the agent. Progress moves a
 * timestamp; the timer is re-armed only when it fires early, so a streamed
 * token costs no timer churn.
 */
export type TimeoutKind = 'deadline' | 'idle';

export class RequestTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private idleMs: number | undefined;
  private idleAt = Number.POSITIVE_INFINITY;
  private firedKind: TimeoutKind | undefined;

  constructor(
    private readonly deadlineAt: number,
    private readonly deadlineMs: number,
    private readonly onFire: (kind: TimeoutKind) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.schedule();
  }

  /** Which clock ran out, if one did. */
  get fired(): TimeoutKind | undefined {
    return this.firedKind;
  }

  /** Starts the idle clock (when the response headers arrive). */
  startIdle(ms: number): void {
    this.idleMs = ms;
    this.idleAt = this.now() + ms;
    this.schedule();
  }

  /** Real progress: a token or tool-call piece arrived. */
  progress(): void {
    if (this.idleMs !== undefined) this.idleAt = this.now() + this.idleMs;
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
    return new TimeoutError(
      `The request to ${url} did not finish within ${duration(this.deadlineMs)}; it was stopped. ` +
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
