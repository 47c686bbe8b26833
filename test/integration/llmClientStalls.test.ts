import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VllmClient } from '../../src/llm/client';
import { ProtocolError, TimeoutError } from '../../src/llm/errors';
import { replyCaps } from '../../src/llm/replyLimits';
import type { ChatMessage } from '../../src/core/messages';
import { SessionStore } from '../../src/core/session/sessionStore';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { startSimulator, type SimHandle } from '../sim/server';
import { until } from './support';

const convo: ChatMessage[] = [{ role: 'user', content: 'Say something short about ports.' }];

describe('request deadlines and reply caps against the simulator', function () {
  this.timeout(30_000);
  let sim: SimHandle;
  beforeEach(async () => {
    sim = await startSimulator({ timeScale: 0 });
  });
  afterEach(() => sim.close());
  const client = (o: { timeoutMs?: number; idleTimeoutMs?: number } = {}) =>
    new VllmClient({ baseURL: sim.url, model: sim.model, retry: { maxRetries: 2 }, ...o });

  it('a server that streams tokens forever is stopped at the overall deadline, and the socket closed', async () => {
    sim.injectFault({ endless: true, times: 5 });
    const t0 = Date.now();
    const e = await client({ timeoutMs: 800 })
      .chat({ messages: convo })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    assert.ok(e instanceof TimeoutError, String(e));
    assert.match(e.message, /did not finish within 800 ms.*--request-timeout/);
    assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
    await until(() => sim.stats.requests[0]?.clientClosed === true);
  });

  it('keep-alive comments do not reset the token-idle clock', async () => {
    sim.injectFault({ commentsOnly: true, times: 5 });
    const t0 = Date.now();
    const e = await client({ timeoutMs: 20_000, idleTimeoutMs: 300 })
      .chat({ messages: convo })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    assert.ok(e instanceof TimeoutError, String(e));
    assert.match(e.message, /sent no tokens for 300 ms \(keep-alive messages do not count\)/);
    assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
    assert.equal(sim.stats.requests.length, 1, 'a timeout is not retried');
  });

  it('a 10 MB streamed reply is cut at the cap derived from max_tokens and not stored', async () => {
    sim.injectFault({ hugeReplyBytes: 10_000_000, times: 5 });
    let seen = 0;
    const e = await client()
      .chat({ messages: convo, maxTokens: 1000 }, { onDelta: (d) => (seen += d.type === 'content' ? d.text.length : 0) })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    assert.ok(e instanceof ProtocolError, String(e));
    assert.match(e.message, /passed \d+ characters, far more than max_tokens 1000/);
    assert.ok(seen <= replyCaps(1000).chars, `delivered ${seen} chars`);
    assert.equal(sim.stats.requests.length, 1, 'not retried');
  });

  it('a 10 MB non-streamed reply is refused at the byte cap', async () => {
    sim.injectFault({ hugeReplyBytes: 10_000_000 });
    const e = await client()
      .chat({ messages: convo, maxTokens: 1000, stream: false })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    assert.ok(e instanceof ProtocolError, String(e));
    assert.match(e.message, /passed \d+ bytes/);
  });

  it('ordinary replies, streamed and not, are unaffected', async () => {
    const a = await client({ timeoutMs: 10_000, idleTimeoutMs: 2000 }).chat({ messages: convo, maxTokens: 64 });
    const b = await client().chat({ messages: convo, maxTokens: 64, stream: false });
    assert.ok((a.message.content ?? '').length > 0 && (b.message.content ?? '').length > 0);
  });

  it('the CLI ends a stalled run with a clear message, the session intact and resumable (--request-timeout)', async () => {
    const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
    const ws = mkdtempSync(join(tmpdir(), 'sp-stall-'));
    writeFileSync(join(ws, 'notes.txt'), 'port 8123\n');
    const session = join(ws, 'run.jsonl');
    const runCli = (args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) => {
        const child = execFile(process.execPath, [cli, ...args], (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
        );
        child.stdin?.end();
      });
    sim.injectFault({ endless: true, times: 10 });
    const r = await runCli([
      'run',
      '--endpoint',
      sim.url,
      '--workspace',
      ws,
      '--task',
      'Which port?',
      '--session',
      session,
      '--request-timeout',
      '1',
      '--json',
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /did not finish within 1 s/);
    const store = await SessionStore.open({ storage: new NodeFileStorage() }, session, { readOnly: true });
    assert.ok(
      store.snapshot.messages.some((m) => m.role === 'user' && m.content === 'Which port?'),
      'the task is kept',
    );
    sim.clearFaults();
    sim.setScript([{ content: 'Port 8123.' }]);
    const again = await runCli(['run', '--endpoint', sim.url, '--workspace', ws, '--task', 'Try again.', '--session', session, '--json']);
    assert.equal(again.code, 0, again.out);
  });
});
