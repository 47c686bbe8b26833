/**
 * The paced transport over HTTPS. A TLS socket is held between batches like a
 * plain one (its handle passes readStop and readStart to the TCP handle
 * beneath it, pacedSocket.ts). A TLS proxy with the test certificate (test/fixtures/tls) sits
 * (test/integration/support.ts) in front of the simulator; the real openai client runs through VllmClient,
 * and the certificate is trusted through the transport's `tls.ca` option.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VllmClient } from '../../src/llm/client';
import { ConnectionError } from '../../src/llm/errors';
import { createPacedFetch, type PacedFetch } from '../../src/llm/pacedFetch';
import type { ChatMessage } from '../../src/core/messages';
import { startSimulator, type SimHandle } from '../sim/server';
import { checkAbortMidStream, countingReads, tlsProxy } from './support';

const TLS_DIR = join(__dirname, '..', 'fixtures', 'tls');
const cert = readFileSync(join(TLS_DIR, 'cert.pem'));
const key = readFileSync(join(TLS_DIR, 'key.pem'));
const convo: ChatMessage[] = [{ role: 'user', content: 'Summarise the design of the request scheduler.' }];
const LONG = Array.from({ length: 60 }, (_, i) => `Step ${i}: the scheduler admits waiting requests while KV blocks remain.`).join(' ');

describe('paced transport over HTTPS (TLS sockets are held too)', function () {
  this.timeout(30_000);
  let sim: SimHandle;
  let proxy: Awaited<ReturnType<typeof tlsProxy>>;
  let paced: PacedFetch;
  beforeEach(async () => {
    sim = await startSimulator({ profile: 'h100-7b', timeScale: 1, streamChunkTokens: 1, script: Array(4).fill({ content: LONG }) });
    proxy = await tlsProxy(sim.port, { cert, key });
    paced = createPacedFetch({ intervalMs: 100, tls: { ca: cert } });
  });
  afterEach(async () => {
    paced.close();
    await proxy.close();
    await sim.close();
  });

  it('streams a reply in batches, with the same text as over plain HTTP and as non-streaming', async () => {
    const perStream: number[] = [];
    const counting = countingReads(paced, perStream);
    let deltas = 0;
    const t0 = Date.now();
    const overTls = await new VllmClient({ baseURL: proxy.url, model: sim.model, fetch: counting }).chat(
      { messages: convo, maxTokens: 120 },
      { onDelta: (d) => d.type === 'content' && deltas++ },
    );
    const wall = Date.now() - t0;
    const plain = await new VllmClient({ baseURL: sim.url, model: sim.model, fetch: paced }).chat({ messages: convo, maxTokens: 120 });
    const unstreamed = await new VllmClient({ baseURL: proxy.url, model: sim.model, fetch: paced }).chat({
      messages: convo,
      maxTokens: 120,
      stream: false,
    });
    assert.equal(overTls.message.content, plain.message.content);
    assert.equal(overTls.message.content, unstreamed.message.content);
    assert.equal(overTls.usage?.completionTokens, unstreamed.usage?.completionTokens);
    assert.ok(overTls.usage!.completionTokens >= 60, `only ${overTls.usage?.completionTokens} tokens`);
    // One event per token; read in ~100 ms batches, as over plain HTTP: far fewer reads than events.
    assert.ok(deltas >= 40, `${deltas} deltas`);
    const reads = perStream[0]!;
    assert.ok(reads >= 2 && reads <= Math.ceil(wall / 100) + 3 && reads < deltas / 3, `${reads} reads for ${deltas} deltas in ${wall} ms`);
    assert.equal(paced.heldStreams(), 2, 'both streamed replies (TLS and plain) had their socket held');
  });

  it('an abort mid-stream ends the call at once and leaves no socket open', async () => {
    await checkAbortMidStream(new VllmClient({ baseURL: proxy.url, model: sim.model, fetch: paced }), sim, paced, convo);
  });

  it('refuses a certificate it was not told to trust, with a connection error naming the cause', async () => {
    const untrusting = createPacedFetch({ intervalMs: 100 });
    try {
      const client = new VllmClient({ baseURL: proxy.url, model: sim.model, fetch: untrusting, retry: { maxRetries: 0 } });
      const e = await client.chat({ messages: convo, maxTokens: 8 }).catch((x: unknown) => x);
      assert.ok(e instanceof ConnectionError, String(e));
      assert.equal((e as ConnectionError).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      assert.match((e as Error).message, /does not trust .*splitpoint\.tls\.caFile.*NODE_EXTRA_CA_CERTS/);
      assert.equal((e as ConnectionError).retryable, false, 'retrying cannot fix trust');
    } finally {
      untrusting.close();
    }
  });
});
