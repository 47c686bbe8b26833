/**
 * splitpoint.tls.caFile (src/host/serverTrust.ts): the host's transport
 * trusts the certificate authorities in a PEM file as well as the system's,
 * over real HTTPS; a path it cannot use is named with what is wrong, and the
 * host connects as before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerTrust } from '../../src/host/serverTrust';
import { sharedPacedFetch } from '../../src/llm/pacedFetch';
import { tickingSseServer } from './support';

const CERT_FILE = join(__dirname, '..', 'fixtures', 'tls', 'cert.pem');
const KEY_FILE = join(__dirname, '..', 'fixtures', 'tls', 'key.pem');

describe('splitpoint.tls.caFile', function () {
  this.timeout(20_000);
  const trusts: ServerTrust[] = [];
  const trust = (read?: (p: string) => string) => {
    const t = new ServerTrust(read);
    trusts.push(t);
    return t;
  };
  afterEach(() => trusts.splice(0).forEach((t) => t.dispose()));

  it("trusts a server whose certificate the file's authority signed, which the shared transport refuses", async () => {
    const { url, server } = await tickingSseServer({ events: 5, tls: { key: readFileSync(KEY_FILE), cert: readFileSync(CERT_FILE) } });
    try {
      const refused = await sharedPacedFetch()(url).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
      assert.equal(refused?.code ?? (refused?.cause as { code?: string } | undefined)?.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const t = trust().transport(CERT_FILE);
      assert.equal(t.problem, undefined);
      const body = await (await t.fetch!(url)).text();
      assert.equal(body.match(/^data: \{/gm)?.length, 5);
    } finally {
      server.close();
    }
  });

  it('no file set: the shared transport, no problem', () => {
    assert.deepEqual(trust().transport(undefined), { fetch: undefined });
  });

  it('keeps one transport while the file is the same, and a new one (the old closed) when it changes', () => {
    let pem = readFixture();
    const t = trust(() => pem);
    const a = t.transport('/ca/a.pem').fetch;
    assert.ok(a);
    assert.equal(t.transport('/ca/a.pem').fetch, a);
    pem = `${pem}\n${pem}`;
    const b = t.transport('/ca/a.pem').fetch;
    assert.ok(b && b !== a);
    assert.equal(t.transport(undefined).fetch, undefined);
  });

  it('reads ~/ from the home folder', () => {
    const asked: string[] = [];
    trust((p) => (asked.push(p), readFixture())).transport('~/certs/ca.pem');
    assert.deepEqual(asked, [join(homedir(), 'certs', 'ca.pem')]);
  });

  it('names what is wrong with a file it cannot use, and connects without it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-ca-'));
    const notPem = join(dir, 'notes.txt');
    writeFileSync(notPem, 'hello');
    const broken = join(dir, 'broken.pem');
    writeFileSync(broken, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
    const cases: Array<[string, RegExp]> = [
      ['certs/ca.pem', /splitpoint\.tls\.caFile: "certs\/ca\.pem" is not an absolute path/],
      [join(dir, 'missing.pem'), /cannot read .*missing\.pem \(ENOENT\)/],
      [notPem, /notes\.txt holds no PEM certificate/],
      [broken, /certificate 1 in .*broken\.pem is not one Node can use/],
    ];
    for (const [path, why] of cases) {
      const r = trust().transport(path);
      assert.equal(r.fetch, undefined, path);
      assert.match(r.problem ?? '', why);
      assert.match(r.problem ?? '', /; connecting without it\.$/);
    }
  });
});

function readFixture(): string {
  return readFileSync(CERT_FILE, 'utf8');
}
