/**
 * Sockets for the paced transport. Pausing a response does not stop its
 * socket's kernel reads: Node's http layer asks for more data as soon as the
 * response's buffer is below its mark, so every pause still costs one or two
 * wake-ups when the server's next events arrive. A held PacedSocket stops
 * the kernel read at once and ignores those requests until it is released
 * (the data waits in the kernel meanwhile); it starts and stops reading the
 * way Node does for its own `onread` sockets (net.js). TLS sockets are not
 * held (their handle wraps another stream) and rely on the one-byte
 * high-water mark alone.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';

/** The one-byte mark makes a paused response stop its socket's reads after one chunk, for sockets that cannot be held. */
const SOCKET_OPTIONS = { readableHighWaterMark: 1 };

/** The libuv stream handle behind a socket: Node's internal API, checked before use. */
interface ReadHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

function readHandle(s: net.Socket): ReadHandle | undefined {
  const h = (s as unknown as { _handle?: Partial<ReadHandle> | null })._handle;
  return h && typeof h.readStart === 'function' && typeof h.readStop === 'function' ? (h as ReadHandle) : undefined;
}

export class PacedSocket extends net.Socket {
  private held = false;

  /** Stops reading from the kernel until release(), whatever the stream above asks for. */
  hold(): void {
    this.held = true;
    const h = readHandle(this);
    if (h?.reading && !this.connecting && !this.destroyed) {
      h.reading = false;
      h.readStop();
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    const h = readHandle(this);
    if (h && !h.reading && !this.connecting && !this.destroyed) {
      h.reading = true;
      h.readStart();
    }
  }

  get isHeld(): boolean {
    return this.held;
  }

  override _read(n: number): void {
    if (!this.held) super._read(n);
  }
}

export class PacedHttpAgent extends http.Agent {
  override createConnection(options: http.ClientRequestArgs): Duplex {
    // What net.createConnection does, with our socket class.
    const opts = options as net.NetConnectOpts;
    const socket = new PacedSocket({ ...opts, ...SOCKET_OPTIONS });
    if (opts.timeout) socket.setTimeout(opts.timeout);
    return socket.connect(opts);
  }
}

export class PacedHttpsAgent extends https.Agent {
  override createConnection(options: https.RequestOptions): Duplex {
    return tls.connect({ ...(options as tls.ConnectionOptions), ...SOCKET_OPTIONS });
  }
}
