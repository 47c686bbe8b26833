/**
 * Past the editor's proxy support once it said DIRECT (src/llm/directRoutes.ts):
 * node:http's request is wrapped here the way VS Code's proxy support wraps
 * it (another agent, and a 'proxy' event on the request saying what it
 * decided), over real HTTP.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientRequest } from 'node:http';
import { DirectRoutes } from '../../src/llm/directRoutes';
import { createPacedFetch } from '../../src/llm/pacedFetch';
import { tickingSseServer } from './support';

const TLS_DIR = join(__dirname, '..', 'fixtures', 'tls');

describe('direct routes', () => {
  it('a DIRECT decision holds for its time to live; a proxy, an error or expiry ends it', () => {
    let now = 1000;
    const routes = new DirectRoutes(60_000, () => now);
    const decide = (origin: string, e: object) => {
      const req = new EventEmitter() as unknown as ClientRequest;
      routes.observe(req, origin);
      req.emit('proxy', e);
    };
    assert.equal(routes.isDirect('http://a:1'), false, 'nothing learned yet');
    decide('http://a:1', { proxy: 'DIRECT', socket: {} });
    decide('http://b:1', { proxy: 'PROXY proxy.corp:3128', socket: {} });
    assert.equal(routes.isDirect('http://a:1'), true);
    assert.equal(routes.isDirect('http://b:1'), false);
    now += 59_999;
    assert.equal(routes.isDirect('http://a:1'), true);
    now += 1;
    assert.equal(routes.isDirect('http://a:1'), false, 'asked again after the time to live');
    decide('http://a:1', { proxy: 'DIRECT' });
    decide('http://a:1', { proxy: 'DIRECT', error: new Error('connect ECONNREFUSED') });
    assert.equal(routes.isDirect('http://a:1'), false, 'a failed DIRECT attempt is not remembered');
    decide('http://a:1', { proxy: 'DIRECT' });
    decide('http://a:1', { proxy: 'PROXY proxy.corp:3128' });
    assert.equal(routes.isDirect('http://a:1'), false, 'the proxy support changed its mind');
  });
});

describe('paced transport past a proxy support that said DIRECT', function () {
  this.timeout(20_000);
  const restore: Array<() => void> = [];
  afterEach(() => restore.splice(0).forEach((f) => f()));

  /** Wraps mod.request as VS Code's proxy support does: its own agent, and a 'proxy' event saying `decision`. */
  function proxySupport(mod: typeof http | typeof https, decision: string | undefined): { calls: number } {
    const seen = { calls: 0 };
    const request = mod.request;
    const agent = mod === https ? new https.Agent({ ca: readFileSync(join(TLS_DIR, 'cert.pem')) }) : new http.Agent();
    mod.request = ((url: URL, opts: http.RequestOptions, cb?: () => void) => {
      seen.calls++;
      const req = request(url, { ...opts, agent }, cb);
      if (decision !== undefined) req.once('socket', () => req.emit('proxy', { proxy: decision, socket: agent }));
      return req;
    }) as typeof http.request;
    restore.push(() => ((mod.request = request), agent.destroy()));
    return seen;
  }

  async function fetchThrice(url: string, tls?: { ca: Buffer }): Promise<{ bodies: string[]; ownSockets: number[]; direct: number }> {
    const paced = createPacedFetch({ intervalMs: 100, ...(tls ? { tls } : {}) });
    restore.push(() => paced.close());
    const bodies: string[] = [];
    const ownSockets: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await paced(url);
      ownSockets.push(paced.openSockets());
      bodies.push(await res.text());
    }
    return { bodies, ownSockets, direct: paced.directOrigins() };
  }

  it('after a DIRECT decision, plain-http requests to that origin skip the proxy support and use the own agent', async () => {
    const { url, server } = await tickingSseServer({ events: 10 });
    restore.push(() => server.close());
    const seen = proxySupport(http, 'DIRECT');
    const r = await fetchThrice(url);
    assert.equal(seen.calls, 1, 'only the first request asked the proxy support');
    assert.deepEqual(r.ownSockets, [0, 1, 1], "the first request had the proxy support's agent, the next ones the transport's own");
    assert.equal(r.direct, 1);
    for (const b of r.bodies) assert.equal(b.match(/^data: \{/gm)?.length, 10);
  });

  it('a proxy decision, or none at all (the CLI, another editor), keeps every request going through it', async () => {
    for (const decision of ['PROXY proxy.corp:3128', undefined]) {
      const { url, server } = await tickingSseServer({ events: 3 });
      restore.push(() => server.close());
      const seen = proxySupport(http, decision);
      const r = await fetchThrice(url);
      assert.equal(seen.calls, 3, String(decision));
      assert.equal(r.direct, 0);
      restore.splice(0).forEach((f) => f());
    }
  });

  it('https always goes through it (it adds the system certificate authorities)', async () => {
    const tls = { key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(join(TLS_DIR, 'cert.pem')) };
    const { url, server } = await tickingSseServer({ events: 3, tls });
    restore.push(() => server.close());
    const seen = proxySupport(https, 'DIRECT');
    const r = await fetchThrice(url, { ca: tls.cert });
    assert.equal(seen.calls, 3);
    assert.equal(r.direct, 0);
  });
});
