/** Small helpers shared by the integration suites (not a test file: mocha only loads *.test.ts). */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { ChatMessage } from '../../src/core/messages';
import type { VllmClient } from '../../src/llm/client';
import { AbortedError } from '../../src/llm/errors';
import type { PacedFetch } from '../../src/llm/pacedFetch';
import type { SimHandle } from '../sim/server';

/** Waits until `cond()` holds, polling every 10 ms; fails after `ms`. */
export async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fetch that counts the chunks each streamed body delivers (one per batch of the paced transport) into `reads`. */
export function countingReads(inner: typeof fetch, reads: number[]): typeof fetch {
  return (async (i: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const r = await inner(i, init);
    if (!r.body || !/event-stream/.test(r.headers.get('content-type') ?? '')) return r;
    const k = reads.push(0) - 1;
    const counted = r.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({ transform: (c, ctl) => (reads[k]!++, ctl.enqueue(c)) }),
    );
    return new Response(counted, { status: r.status, headers: r.headers });
  }) as typeof fetch;
}

/**
 * Aborts a long streamed chat after its first token and checks what the user sees: the call ends at once with
 * AbortedError, the server sees the client close, and the transport keeps no socket.
 */
export async function checkAbortMidStream(
  client: VllmClient,
  sim: SimHandle,
  transport: PacedFetch,
  messages: ChatMessage[],
): Promise<void> {
  const ctl = new AbortController();
  let seen = 0;
  const call = client.chat({ messages, maxTokens: 400 }, { signal: ctl.signal, onDelta: () => seen++ }).catch((e: unknown) => e);
  await until(() => seen > 0);
  const t0 = Date.now();
  ctl.abort();
  const e = await call;
  assert.ok(e instanceof AbortedError, String(e));
  assert.ok(Date.now() - t0 < 100, `abort took ${Date.now() - t0} ms`);
  await until(() => sim.stats.requests[0]?.clientClosed === true);
  assert.equal(transport.openSockets(), 0);
}

/**
 * An SSE server that writes `events` small events 5 ms apart, then `[DONE]`: a stream whose reads a test can count.
 * Over TLS when given a key and certificate; on `host` (default 127.0.0.1).
 */
export async function tickingSseServer(o: {
  events: number;
  host?: string;
  tls?: { key: Buffer; cert: Buffer } | undefined;
}): Promise<{ url: string; server: http.Server }> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    // Each event leaves at once, not held back by Nagle's algorithm for the last one's ACK.
    res.socket?.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const t = setInterval(() => {
      res.write(`data: {"i":${i}}\n\n`);
      if (++i === o.events) {
        clearInterval(t);
        res.end('data: [DONE]\n\n');
      }
    }, 5);
    res.once('close', () => clearInterval(t));
  };
  const host = o.host ?? '127.0.0.1';
  const server = o.tls ? https.createServer(o.tls, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, host, r));
  return { url: `${o.tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}/v1/stream`, server };
}

/** Terminates TLS on `host` (default 127.0.0.1) and pipes each connection to a plain port on 127.0.0.1 (the simulator's). */
export async function tlsProxy(
  targetPort: number,
  tls: { cert: Buffer; key: Buffer },
  host = '127.0.0.1',
): Promise<{ url: string; server: TlsServer; close(): Promise<void> }> {
  const links = new Set<Socket>();
  const server = createTlsServer(tls, (secure) => {
    const plain = connect(targetPort, '127.0.0.1');
    links.add(plain);
    plain.once('close', () => links.delete(plain));
    secure.pipe(plain).pipe(secure);
    const end = () => (secure.destroy(), plain.destroy());
    secure.once('error', end).once('close', end);
    plain.once('error', end).once('close', end);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const close = async () => {
    await new Promise((r) => server.close(r));
    for (const s of links) s.destroy();
  };
  return { url: `https://${host}:${(server.address() as AddressInfo).port}/v1`, server, close };
}
