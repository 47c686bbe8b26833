/**
 * Holding a socket: stopping its kernel reads between the paced transport's
 * batches. Pausing a response does not stop them: Node's http layer asks for
 * more data as soon as the response's buffer is below its mark, so every
 * pause still costs one or two wake-ups when the server's next events arrive.
 * A held socket stops the kernel read at once and ignores the stream's read
 * requests until it is released (the data waits in the kernel meanwhile); it
 * starts and stops reading the way Node does for its own `onread` sockets
 * (net.js).
 *
 * This works on any socket the request was given, not only on sockets of our
 * own agent: VS Code's proxy support replaces the agent of every request to a
 * host other than localhost/127.0.0.1 with its own (DIRECT requests then get a
 * socket from Node's global agent), and that is where a real vLLM server
 * lives. TLS sockets are held the same way: their handle passes readStop and
 * readStart to the TCP handle beneath it.
 */
import type * as net from 'node:net';

/** The libuv stream handle behind a socket: Node's internal API, checked before use. */
interface ReadHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

type Readable = net.Socket & { _read(n: number): void };

function readHandle(s: net.Socket): ReadHandle | undefined {
  const h = (s as unknown as { _handle?: Partial<ReadHandle> | null })._handle;
  return h && typeof h.readStart === 'function' && typeof h.readStop === 'function' ? (h as ReadHandle) : undefined;
}

/**
 * Held sockets, with their own `_read` property from before (almost always none: net.Socket's comes from its
 * prototype), so that release leaves a pooled socket, which other code may use next, as it was.
 */
const held = new WeakMap<net.Socket, PropertyDescriptor | undefined>();

/** While held, the stream's requests for more data must not restart the kernel read. */
function ignoreRead(): void {}

/**
 * Stops reading `s` from the kernel until releaseSocket(s), whatever the stream above asks for. Returns false, and
 * does nothing, for a socket without a stream handle (already closed, or not a socket).
 */
export function holdSocket(s: net.Socket): boolean {
  if (held.has(s)) return true;
  const h = readHandle(s);
  if (!h || s.destroyed) return false;
  held.set(s, Object.getOwnPropertyDescriptor(s, '_read'));
  (s as Readable)._read = ignoreRead;
  if (h.reading && !s.connecting) {
    h.reading = false;
    h.readStop();
  }
  return true;
}

export function releaseSocket(s: net.Socket): void {
  if (!held.has(s)) return;
  const own = held.get(s);
  held.delete(s);
  if (own) Object.defineProperty(s, '_read', own);
  else delete (s as Partial<Readable>)._read;
  const h = readHandle(s);
  if (h && !h.reading && !s.connecting && !s.destroyed) {
    h.reading = true;
    h.readStart();
  }
}

export function isHeld(s: net.Socket): boolean {
  return held.has(s);
}
