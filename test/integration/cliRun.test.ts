import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // stdin is not a terminal here, so approvals cannot be asked for.
    const child = execFile(process.execPath, [cli, ...args], { maxBuffer: 1 << 26 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('splitpoint run (built CLI) against the scripted simulator', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  beforeEach(async () => {
    sim = await startSimulator({ maxModelLen: 32_768, timeScale: 0 });
    sim.setScript([
      { content: 'Let me look.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      {
        content: 'Writing the answer.',
        tool_calls: [{ name: 'write_file', arguments: { path: 'out/answer.txt', content: 'port 8123\n' } }],
      },
      { content: 'Done: out/answer.txt says port 8123.' },
    ]);
  });
  afterEach(() => sim.close());

  it('runs the loop with Node tools confined to the workspace and prints one JSON event per line', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'sp-run-'));
    writeFileSync(join(ws, 'notes.txt'), 'The service listens on port 8123.\n');
    const session = join(ws, '..', `${ws.split('/').pop()}.jsonl`);
    const r = await runCli([
      'run',
      '--endpoint',
      sim.url,
      '--workspace',
      ws,
      '--task',
      'Which port? Write it to out/answer.txt.',
      '--session',
      session,
      '--yes',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    const types = events.map((e) => e.type);
    assert.ok(types.includes('tool-call') && types.includes('tool-result') && types.includes('assistant-message'));
    assert.deepEqual(events.at(-1), { type: 'done', reason: 'answer', steps: 3 });
    assert.equal(readFileSync(join(ws, 'out', 'answer.txt'), 'utf8'), 'port 8123\n');
    const log = readFileSync(session, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    assert.equal(log[0]!.type, 'session');
    assert.equal(log.filter((e) => e.type === 'message').length, 7, 'system, user, 3 assistant replies, 2 tool results');
  });

  it('without --yes and without a terminal, writes are rejected and the model is told why', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'sp-run-'));
    writeFileSync(join(ws, 'notes.txt'), 'port 8123\n');
    const r = await runCli(['run', '--endpoint', sim.url, '--workspace', ws, '--task', 'Write it down.', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(ws, 'out', 'answer.txt')), false);
    const rejected = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e: { type: string; approved?: boolean }) => e.type === 'tool-approval' && e.approved === false);
    assert.match(rejected.reason, /pass --yes/);
  });

  it('refuses a plain messages array as --session, points to import, and writes nothing next to it', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'sp-run-'));
    const dir = mkdtempSync(join(tmpdir(), 'sp-run-array-'));
    const file = join(dir, 'chat.json');
    const array = JSON.stringify([{ role: 'user', content: 'hi' }]);
    writeFileSync(file, array);
    const err: string[] = [];
    // In process, so the refusal is tested from the source without rebuilding dist/cli.js.
    const code = await main(['run', '--endpoint', sim.url, '--workspace', ws, '--task', 'x', '--session', file, '--yes'], {
      out: () => undefined,
      err: (t) => err.push(t),
    });
    assert.equal(code, 1);
    const message = err.join('\n');
    assert.doesNotMatch(message, /damaged/);
    assert.match(message, /is not a Splitpoint session log/);
    assert.ok(message.includes(`splitpoint import ${file}`) && message.includes(`--session ${join(dir, 'chat.jsonl')}`), message);
    assert.deepEqual(readdirSync(dir), ['chat.json'], 'no backup, no log, no spill folder');
    assert.equal(readFileSync(file, 'utf8'), array);
  });

  it('rejects a workspace that does not exist with a usage error', async () => {
    const r = await runCli(['run', '--endpoint', sim.url, '--workspace', '/nonexistent/ws', '--task', 'x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /is not a folder/);
  });
});
