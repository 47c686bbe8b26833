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
  let pending: Buffer[] = [];
  let withdraw: (() => void) | undefined;
  let immediate: ReturnType<typeof setImmediate> | undefined;
  let closed = false;
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  // The request's socket, whoever's agent made it (VS Code's proxy support may have swapped ours for its own).
  const socket = res.socket ?? undefined;

  const stopPacing = () => {
    withdraw?.();
    if (socket) releaseSocket(socket);
    if (immediate) clearImmediate(immediate);
    withdraw = undefined;
    immediate = undefined;
  };
  const flush = () => {
    if (pending.length === 0 || closed) return;
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    ctl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  };
  const resume = () => {
    withdraw = undefined;
    if (socket) releaseSocket(socket);
    res.resume();
    immediate = setImmediate(endBatch);
  };
  // One batch ends in the check phase, after the poll phase in which the socket read what the kernel held.
  const endBatch = () => {
    immediate = undefined;
    flush();
    const clock = clockOf?.();
    if (closed || res.readableEnded || !clock) return;
    res.pause();
    if (socket && holdSocket(socket) && onHeld) {
      onHeld();
      onHeld = undefined;
    }
    withdraw = clock.wait(resume);
  };
  const fail = (e: Error) => {
    if (closed) return;
    closed = true;
    stopPacing();
    ctl.error(e);
  };

  return new ReadableStream<Uint8Array>({
    start(c) {
      ctl = c;
      res.on('data', (b: Buffer) => {
        if (!clockOf) {
          if (!closed) ctl.enqueue(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
          return;
        }
        pending.push(b);
        // The first data of the response starts the first batch's end-of-turn.
        if (!withdraw && !immediate) immediate = setImmediate(endBatch);
      });
      res.once('end', () => {
        if (closed) return;
        stopPacing();
        flush();
        closed = true;
        ctl.close();
      });
      res.once('error', fail);
      res.once('aborted', () => fail(Object.assign(new Error('terminated: the server closed the response early'), { code: 'ECONNRESET' })));
      req.once('error', fail);
      res.once('close', () => {
        if (!res.complete)
          fail(Object.assign(new Error('terminated: the connection closed before the response ended'), { code: 'ECONNRESET' }));
      });
    },
    cancel() {
      closed = true;
      stopPacing();
      req.destroy();
    },
  });
}
