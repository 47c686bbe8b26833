import type { ClientRequest, IncomingMessage } from 'node:http';
import { holdSocket, releaseSocket } from './pacedSocket';
import type { PacingClock } from './pacingClock';

/**
 * The body of a node:http response as a web ReadableStream. With a clock,
 * the response is read in batches: after each read the response is paused
 * and its socket held (the kernel read stops at once, pacedSocket.ts, so events
 * queue in the kernel and wake nobody), and at the clock's next tick, which
 * all streams share, it is resumed for one turn of the event loop; what that
 * turn brought is handed on as one chunk. The clock is asked for after every
 * batch, so a stream can move to a slower or faster one while it runs.
 * Cancelling the stream, or an error on the request, destroys the request
 * (and its socket).
 */
export function pacedBody(
  req: ClientRequest,
  res: IncomingMessage,
  /** The clock to wait on after the current batch; undefined: not paced (each read is handed on as it comes). */
  clockOf: (() => PacingClock | undefined) | undefined,
  /** Called once, the first time the response's socket is held (tests: the transport holds whatever socket it gets). */
  onHeld?: () => void,
): ReadableStream<Uint8Array> {
  const body = new PacedBody(req, res, clockOf, onHeld);
  return new ReadableStream<Uint8Array>({
    start: (c) => body.start(c),
    cancel: () => body.cancel(),
  });
}

/**
 * One response's batching. The per-read path is methods (their handlers bound once per response), not closures made
 * per response: V8 holds a closure's optimised code weakly, so each major collection after a response's closures die
 * throws it away and the next compaction's streams compile it again; a method's code lives as long as the class.
 */
class PacedBody {
  private pending: Buffer[] = [];
  private withdraw: (() => void) | undefined;
  private immediate: ReturnType<typeof setImmediate> | undefined;
  private closed = false;
  private ctl!: ReadableStreamDefaultController<Uint8Array>;
  /** The request's socket, whoever's agent made it (VS Code's proxy support may have swapped ours for its own). */
  private readonly socket: IncomingMessage['socket'] | undefined;
  private readonly resumeBound = this.resume.bind(this);
  private readonly endBatchBound = this.endBatch.bind(this);
  private readonly failBound = this.fail.bind(this);

  constructor(
    private readonly req: ClientRequest,
    private readonly res: IncomingMessage,
    private readonly clockOf: (() => PacingClock | undefined) | undefined,
    private onHeld: (() => void) | undefined,
  ) {
    this.socket = res.socket ?? undefined;
  }

  start(c: ReadableStreamDefaultController<Uint8Array>): void {
    const { req, res } = this;
    this.ctl = c;
    res.on('data', this.onData.bind(this));
    res.once('end', this.onEnd.bind(this));
    res.once('error', this.failBound);
    res.once('aborted', () =>
      this.fail(Object.assign(new Error('terminated: the server closed the response early'), { code: 'ECONNRESET' })),
    );
    req.once('error', this.failBound);
    res.once('close', () => {
      if (!res.complete)
        this.fail(Object.assign(new Error('terminated: the connection closed before the response ended'), { code: 'ECONNRESET' }));
    });
  }

  cancel(): void {
    this.closed = true;
    this.stopPacing();
    this.req.destroy();
  }

  private onData(b: Buffer): void {
    if (!this.clockOf) {
      if (!this.closed) this.ctl.enqueue(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
      return;
    }
    this.pending.push(b);
    // The first data of the response starts the first batch's end-of-turn.
    if (!this.withdraw && !this.immediate) this.immediate = setImmediate(this.endBatchBound);
  }

  private onEnd(): void {
    if (this.closed) return;
    this.stopPacing();
    this.flush();
    this.closed = true;
    this.ctl.close();
  }

  private stopPacing(): void {
    this.withdraw?.();
    if (this.socket) releaseSocket(this.socket);
    if (this.immediate) clearImmediate(this.immediate);
    this.withdraw = undefined;
    this.immediate = undefined;
  }

  private flush(): void {
    const pending = this.pending;
    if (pending.length === 0 || this.closed) return;
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    this.pending = [];
    this.ctl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }

  private resume(): void {
    this.withdraw = undefined;
    if (this.socket) releaseSocket(this.socket);
    this.res.resume();
    this.immediate = setImmediate(this.endBatchBound);
  }

  // One batch ends in the check phase, after the poll phase in which the socket read what the kernel held.
  private endBatch(): void {
    const { res, socket } = this;
    this.immediate = undefined;
    this.flush();
    const clock = this.clockOf?.();
    if (this.closed || res.readableEnded || !clock) return;
    res.pause();
    if (socket && holdSocket(socket) && this.onHeld) {
      this.onHeld();
      this.onHeld = undefined;
    }
    this.withdraw = clock.wait(this.resumeBound);
  }

  private fail(e: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.stopPacing();
    this.ctl.error(e);
  }
}
