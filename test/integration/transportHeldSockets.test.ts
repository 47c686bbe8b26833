/**
 * Holding sockets (src/llm/pacedSocket.ts): the paced transport stops a
 * streamed response's kernel reads between batches on whatever socket the
 * request was given. In VS Code that is often not our agent's: its proxy
 * support replaces the agent of every request to a host other than
 * localhost/127.0.0.1 with its own, and a DIRECT request then gets a socket
 * from Node's global agent. Plain TCP and TLS sockets, over real connections.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer as createTcpServer, Socket, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { createPacedFetch } from '../../src/llm/pacedFetch';
import { holdSocket, isHeld, releaseSocket } from '../../src/llm/pacedSocket';
import { tickingSseServer, until } from './support';

const TLS_DIR = join(__dirname, '..', 'fixtures', 'tls');
/** The test certificate (self-signed, for 127.0.0.1 and localhost, valid until 2126; its key is public). */
const CERT = { key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(join(TLS_DIR, 'cert.pem')) };

/** A server that writes one byte every 5 ms to whoever connects; `written` counts them. */
async function tickingServer(secure: boolean): Promise<{ port: number; written: () => number; close: () => Promise<void> }> {
  let written = 0;
  const onConnection = (c: Socket) => {
    // Without Nagle's algorithm each byte leaves at once: with it, bytes wait in the server's send buffer for the
    // ACK of the last ones (delayed up to 40 ms), and "written" would count bytes the client's kernel does not yet hold.
    c.setNoDelay(true);
    const t = setInterval(() => (c.write('x'), written++), 5);
    c.on('close', () => clearInterval(t));
    c.on('error', () => undefined);
  };
  const server = secure ? tls.createServer(CERT, onConnection) : createTcpServer(onConnection);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    written: () => written,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

for (const secure of [false, true]) {
  describe(`held socket (${secure ? 'TLS' : 'TCP'})`, () => {
    it('reads nothing from the kernel while held, whatever the stream above asks, and drains it in one turn on release', async () => {
      const server = await tickingServer(secure);
      const sock = secure
        ? tls.connect({ port: server.port, host: '127.0.0.1', ca: CERT.cert })
        : new Socket().connect(server.port, '127.0.0.1');
      try {
        let chunks = 0;
        let bytes = 0;
        sock.on('data', (b: Buffer) => (chunks++, (bytes += b.length)));
        await until(() => chunks >= 3);
        assert.equal(holdSocket(sock), true);
        assert.equal(isHeld(sock), true);
        const [seen, before] = [chunks, server.written()];
        sock.resume(); // what Node's http layer does when its response wants more
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(chunks, seen, 'no data while held');
        const waited = server.written() - before;
        assert.ok(waited >= 10, `the server wrote only ${waited} bytes in 200 ms`);
        const b0 = bytes;
        releaseSocket(sock);
        assert.equal(isHeld(sock), false);
        // One turn of the event loop after the release: what waited in the kernel came in that turn's read
        // (one TCP read; TLS hands each record on as its own chunk, all in the same turn).
        await new Promise((r) => sock.once('data', r));
        await new Promise((r) => setImmediate(r));
        assert.ok(bytes - b0 >= waited - 2, `${waited} bytes waited; the turn after release brought ${bytes - b0}`);
        // Released, it reads as before and its `_read` is its prototype's again (a pooled socket is left as found).
        assert.equal(Object.prototype.hasOwnProperty.call(sock, '_read'), false);
        const after = chunks;
        await until(() => chunks > after + 2);
      } finally {
        sock.destroy();
        await server.close();
      }
    });
  });
}

describe("paced transport on a socket from someone else's agent (VS Code's proxy support)", function () {
  this.timeout(20_000);
  const restore: Array<() => void> = [];
  afterEach(() => restore.splice(0).forEach((f) => f()));

  /** Does to node:http(s).request what VS Code's proxy support does for a DIRECT request: swaps in another agent. */
  function swapAgent(mod: typeof http | typeof https, agent: http.Agent): () => number {
    // Turns of the event loop in which the socket brought data: a wake-up each, the cost pacing saves. (Counting
    // 'data' events would count TLS records, which a held TLS socket also hands on several to a turn.)
    let turns = 0;
    let counted = false;
    const make = agent.createConnection.bind(agent) as (...a: unknown[]) => Socket;
    (agent as unknown as { createConnection: (...a: unknown[]) => Socket }).createConnection = (...a) => {
      const s = make(...a);
      s.on('data', () => {
        if (counted) return;
        counted = true;
        turns++;
        setImmediate(() => (counted = false));
      });
      return s;
    };
    const request = mod.request;
    mod.request = ((url: URL, opts: http.RequestOptions, cb?: () => void) => request(url, { ...opts, agent }, cb)) as typeof http.request;
    restore.push(() => ((mod.request = request), agent.destroy()));
    return () => turns;
  }

  for (const secure of [false, true]) {
    it(`${secure ? 'https' : 'http'}: the socket wakes the process once per batch, not once per event`, async () => {
      const events = 80;
      const { url, server } = await tickingSseServer({ events, tls: secure ? CERT : undefined });
      restore.push(() => server.close());
      const agent = secure ? new https.Agent({ ca: CERT.cert, keepAlive: true }) : new http.Agent({ keepAlive: true });
      const turns = swapAgent(secure ? https : http, agent);
      const paced = createPacedFetch({ intervalMs: 100 });
      restore.push(() => paced.close());
      const t0 = Date.now();
      const res = await paced(url);
      const body = await res.text();
      const wall = Date.now() - t0;
      assert.equal(body.match(/^data: \{/gm)?.length, events, 'every event arrives');
      assert.equal(paced.openSockets(), 0, "the request went through the swapped-in agent, not the transport's own");
      assert.equal(paced.heldStreams(), 1);
      assert.ok(wall >= 350, `the stream took only ${wall} ms`);
      // Unheld, the socket wakes the process for each event as it arrives (~80 times); held, once per 100 ms batch
      // (plus the headers' turn and the end's).
      assert.ok(turns() <= Math.ceil(wall / 100) + 4, `the socket brought data in ${turns()} turns in ${wall} ms for ${events} events`);
    });
  }
});
