/**
 * An https endpoint whose certificate authority the machine does not trust,
 * in the real extension host: the connection fails with a message naming
 * splitpoint.tls.caFile, and setting it to the authority's PEM file makes the
 * server reachable. The server is on 127.0.0.2, so VS Code's proxy support
 * swaps in its own agent, as for a server on another machine: the authority
 * must survive that (it travels in the request's options).
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tlsProxy } from '../../integration/support';
import { api, setSetting, sim, suiteConfig, waitFor } from './api';

describe('https endpoint with its own certificate authority (splitpoint.tls.caFile)', function () {
  this.timeout(60_000);

  it('names the setting when the certificate is not trusted, and connects once the CA file is set', async () => {
    const a = await api();
    const tlsDir = join(suiteConfig().repoRoot, 'test', 'fixtures', 'tls');
    const proxy = await tlsProxy(
      sim().port,
      { cert: readFileSync(join(tlsDir, 'cert.pem')), key: readFileSync(join(tlsDir, 'key.pem')) },
      '127.0.0.2',
    );
    const before = a.snapshot().settings.endpoint;
    try {
      await setSetting('splitpoint.endpoint', proxy.url);
      const refused = await waitFor('the refused connection', () => {
        const s = a.snapshot();
        return s.settings.endpoint === proxy.url && s.connection.state === 'error' ? s.connection.message : undefined;
      });
      assert.match(refused ?? '', /does not trust/);
      assert.match(refused ?? '', /splitpoint\.tls\.caFile/);
      await setSetting('splitpoint.tls.caFile', join(tlsDir, 'cert.pem'));
      await waitFor('the connection through the CA file', () => a.snapshot().connection.state === 'ok');
      assert.equal(a.snapshot().connection.model, sim().model);
    } finally {
      await setSetting('splitpoint.tls.caFile', undefined);
      await setSetting('splitpoint.endpoint', before);
      await waitFor('the connection back to the simulator', () => a.snapshot().connection.state === 'ok');
      await proxy.close();
    }
  });
});
