/**
 * The side bar's connection line follows what requests find: a request to the
 * agent's server that nothing answers (the agent's or a compaction worker's)
 * turns it to error, and the next answer back to ok, each pushed to the view
 * at once rather than when the view is shown again.
 */
import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import type { ServerConnection } from '../../src/host/serverConnection';
import type { ViewSnapshot } from '../../src/protocol/messages';
import { startSimulator, type SimHandle } from '../sim';
import { installFakeVscode } from './helpers/fakeVscode';

type Line = ViewSnapshot['connection'];
type Role = 'agent' | 'compactor';

interface Rig {
  conn: ServerConnection;
  /** What the view was sent, one connection line per push (the host's hooks.probed pushes a snapshot). */
  pushes: Line[];
  /** How many times the server was asked for its models. */
  probes(): number;
}

function rig(endpoint: string): Rig {
  const { fake, uninstall } = installFakeVscode();
  // The alert reportError shows; nobody picks an action here.
  const win = fake.api.window as Record<string, unknown>;
  win.showErrorMessage = win.showWarningMessage = async () => undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ServerConnection } = require('../../src/host/serverConnection') as typeof import('../../src/host/serverConnection');
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn() {}, error() {}, debug() {}, trace() {}, show() {} };
    const pushes: Line[] = [];
    const conn: ServerConnection = new ServerConnection({
      log: log as never,
      warn() {},
      probed: () => pushes.push({ ...conn.connection }),
      memo: { get: () => undefined, update: async () => undefined },
      workspaceRoot: () => undefined,
    });
    conn.settings = { ...defaultSettings(), endpoint, requestTimeoutSeconds: 10 };
    conn.rebuildEndpoints();
    return { conn, pushes, probes: () => lines.filter((l) => l.startsWith('probe ')).length };
  } finally {
    uninstall();
  }
}

const req = { messages: [{ role: 'user' as const, content: 'hello' }], maxTokens: 8 };

async function until(what: string, cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the connection line is pushed when requests find the server down or back', function () {
  let sim: SimHandle;
  afterEach(async () => {
    await sim?.close();
  });

  for (const role of ['agent', 'compactor'] as const satisfies readonly Role[]) {
    it(`ok → error → ok on ${role} requests, one push per change and one probe to come back`, async () => {
      sim = await startSimulator({ timeScale: 0 });
      const { conn, pushes, probes } = rig(sim.url);
      const port = () => conn.endpoints![role];
      await conn.probe();
      assert.equal(conn.connection.state, 'ok');
      pushes.length = 0;

      await sim.close();
      await assert.rejects(port().chat(req), /connection refused/);
      // As the host does when the agent's turn fails (a compaction worker's failure never gets here).
      if (role === 'agent') conn.reportError((port().lastError as Error).message);
      assert.deepEqual(
        pushes.map((p) => p.state),
        ['error'],
        'the refused request turns the line to error at once, and once',
      );
      assert.match(pushes[0]!.message ?? '', /cannot reach the model server/);
      await assert.rejects(port().chat(req));
      assert.equal(pushes.length, 1, 'a second refusal changes nothing, so nothing is pushed');

      const probesBefore = probes();
      sim = await startSimulator({ timeScale: 0, port: sim.port });
      await port().chat(req);
      await until('the line back to ok', () => conn.connection.state === 'ok');
      assert.deepEqual(
        pushes.map((p) => p.state),
        ['error', 'ok'],
      );
      assert.match(pushes[1]!.message ?? '', new RegExp(sim.model));
      await port().chat(req);
      await port().chat(req);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(probes() - probesBefore, 1, 'one probe for the change back, none for the requests after it');
      assert.equal(pushes.length, 2);
    });
  }

  it('a request sent before the line changed does not change it back (parallel workers do not make it flap)', async () => {
    sim = await startSimulator({ timeScale: 0 });
    const { conn, pushes, probes } = rig(sim.url);
    await conn.probe();
    pushes.length = 0;
    const probesBefore = probes();
    // A worker sent while the server was up, still being answered as the server goes.
    const reach = (conn as unknown as { reach: { started(): number; settled(stamp: number, err?: unknown): void } }).reach;
    const early = reach.started();
    await sim.close();
    await assert.rejects(conn.endpoints!.compactor.chat(req));
    reach.settled(early);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      pushes.map((p) => p.state),
      ['error'],
    );
    assert.equal(probes(), probesBefore, 'an answer from before the change asks nothing');
  });

  it("a compactor on another server does not change the agent server's line", async () => {
    sim = await startSimulator({ timeScale: 0 });
    const { conn, pushes } = rig(sim.url);
    await conn.probe();
    pushes.length = 0;
    conn.settings = { ...conn.settings!, compactor: { ...conn.settings!.compactor, endpoint: 'http://127.0.0.1:9/v1' } };
    conn.rebuildEndpoints();
    await assert.rejects(conn.endpoints!.compactor.chat(req));
    assert.equal(conn.connection.state, 'ok');
    assert.equal(pushes.length, 0);
  });
});

describe('the log names the endpoint the settings gave', () => {
  it('at each start and change, without credentials a URL may carry', () => {
    const { fake, uninstall } = installFakeVscode();
    let endpoint = 'http://user:secret@gpu-box:8000/v1';
    (fake.api.workspace as Record<string, unknown>).getConfiguration = () => ({
      get: (key: string) => (key === 'endpoint' ? endpoint : undefined),
    });
    // The settings reader took the fake of an earlier test when first loaded: load it again, with this one.
    for (const k of Object.keys(require.cache)) if (/src[\\/]host[\\/](serverConnection|config)\.ts$/.test(k)) delete require.cache[k];
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { ServerConnection } = require('../../src/host/serverConnection') as typeof import('../../src/host/serverConnection');
      const lines: string[] = [];
      const log = { info: (m: string) => lines.push(m), warn() {}, error() {}, debug() {}, trace() {}, show() {} };
      const conn = new ServerConnection({
        log: log as never,
        warn() {},
        probed() {},
        memo: { get: () => undefined, update: async () => undefined },
        workspaceRoot: () => undefined,
      });
      conn.loadSettings();
      conn.loadSettings();
      endpoint = 'http://127.0.0.1:9000/v1';
      conn.loadSettings();
      assert.deepEqual(lines, ['settings: endpoint http://gpu-box:8000/v1', 'settings: endpoint http://127.0.0.1:9000/v1']);
    } finally {
      uninstall();
    }
  });
});
