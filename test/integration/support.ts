/** Small helpers shared by the integration suites (not a test file: mocha only loads *.test.ts). */

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
