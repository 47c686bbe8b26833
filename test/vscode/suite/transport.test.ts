/**
 * The paced transport inside the real extension host, where VS Code's proxy
 * support has patched node:http. For any host but localhost/127.0.0.1 it
 * swaps the request's agent for its own (a DIRECT request then gets a socket
 * from Node's global agent), so the transport must pace whatever socket it
 * gets. 127.0.0.2 (loopback on Linux) stands in for a vLLM server on another
 * machine. After VS Code has said DIRECT for an origin, plain-http requests
 * to it go past its proxy support (src/llm/directRoutes.ts).
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { createPacedFetch } from '../../../src/llm/pacedFetch';
import { tickingSseServer } from '../../integration/support';

describe('paced transport under VS Code proxy support', function () {
  this.timeout(20_000);

  for (const [host, swapped] of [
    ['127.0.0.1', false],
    ['127.0.0.2', true],
  ] as const) {
    it(`${host}: the stream's socket is held between batches (${swapped ? "VS Code's agent" : 'our agent'})`, async () => {
      assert.equal(vscode.workspace.getConfiguration('http').get('proxySupport'), 'override', "VS Code's default");
      const { url, server } = await tickingSseServer({ host, events: 60 });
      const paced = createPacedFetch({ intervalMs: 100 });
      try {
        const res = await paced(url);
        const duringStream = paced.openSockets();
        const body = await res.text();
        assert.equal(body.match(/^data: \{/gm)?.length, 60);
        // What VS Code did with the request: its own agent for other hosts, ours for localhost.
        assert.equal(duringStream, swapped ? 0 : 1);
        assert.equal(paced.heldStreams(), 1, 'the socket was held whoever made it');
        assert.ok(paced.pacingTicks() >= 2, `${paced.pacingTicks()} pacing ticks`);
        // VS Code's proxy support said DIRECT on the request (its 'proxy' event), so the next request to this origin
        // goes past it, with the transport's own agent (directRoutes.ts).
        assert.equal(paced.directOrigins(), 1);
        const again = await paced(url);
        assert.equal(paced.openSockets(), 1, "the second request has the transport's own socket");
        assert.equal((await again.text()).match(/^data: \{/gm)?.length, 60);
        assert.equal(paced.heldStreams(), 2);
      } finally {
        paced.close();
        server.close();
      }
    });
  }
});
