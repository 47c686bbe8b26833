import type { ClientRequest, IncomingMessage } from 'node:http';

/**
 * The body of a node:http response as a web ReadableStream. With
 * `intervalMs` > 0 the response is read in batches: after each read it is
 * paused for `intervalMs` (the socket, with its one-byte high-water mark,
 * stops reading too, so the kernel holds what arrives), then resumed for one
 * turn of the event loop, in which the socket drains everything pending;
 * what that turn brought is handed on as one chunk. Cancelling the stream, or
 * an error on the request, destroys the request (and its socket).
 */
export function pacedBody(req: ClientRequest, res: IncomingMessage, intervalMs: number): ReadableStream<Uint8Array> {
  let pending: Buffer[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate: ReturnType<typeof setImmediate> | undefined;
  let closed = false;
  let ctl!: ReadableStreamDefaultController<Uint8Array>;

  const stopTimers = () => {
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
    timer = undefined;
    immediate = undefined;
  };
  const flush = () => {
    if (pending.length === 0 || closed) return;
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    ctl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  };
  // One batch ends in the check phase, after the poll phase in which the socket read what the kernel held.
  const endBatch = () => {
    immediate = undefined;
    flush();
    if (closed || res.readableEnded) return;
    res.pause();
    timer = setTimeout(() => {
      timer = undefined;
      res.resume();
      immediate = setImmediate(endBatch);
    }, intervalMs);
  };
  const fail = (e: Error) => {
    if (closed) return;
    closed = true;
    stopTimers();
    ctl.error(e);
  };

  return new ReadableStream<Uint8Array>({
    start(c) {
      ctl = c;
      res.on('data', (b: Buffer) => {
        if (intervalMs <= 0) {
          if (!closed) ctl.enqueue(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
          return;
        }
        pending.push(b);
        // The first data after a resume (or of the response) starts the batch's end-of-turn.
        if (!timer && !immediate) immediate = setImmediate(endBatch);
      });
      res.once('end', () => {
        if (closed) return;
        stopTimers();
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
      stopTimers();
      req.destroy();
    },
  });
}
