/** Small helpers shared by the integration suites (not a test file: mocha only loads *.test.ts). */
import assert from 'node:assert/strict';
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
