import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('splitpoint inspect (built CLI)', function () {
  this.timeout(30_000);
  before(() => assert.ok(existsSync(cli), 'dist/cli.js is missing: run "npm run build" first (npm test does)'));

  it('prints the documented JSON for a plain messages array', () => {
    // A window the whole session fits in: token-fraction keeps 30 % of all of it, from a user message.
    const r = run('inspect', '--session', join(root, 'test', 'fixtures', 'long-session.json'), '--json', '--window', '262144');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const raw = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'long-session.json'), 'utf8'));
    assert.equal(out.messages.length, raw.length);
    assert.deepEqual(Object.keys(out.messages[0]).slice(0, 3), ['index', 'id', 'role']);
    assert.equal(out.messages[5].index, 5);
    assert.equal(out.messages[5].role, raw[5].role);
    assert.equal(
      out.messages.reduce((a: number, m: { tokens: number }) => a + m.tokens, 0),
      out.totalTokens,
    );
    for (const name of ['user-messages', 'token-fraction', 'recent-turns']) {
      const s = out.strategies[name];
      assert.ok(Number.isInteger(s.tailStartIndex) && s.tailStartIndex > 0 && s.tailStartIndex <= raw.length, name);
    }
    assert.ok(Array.isArray(out.strategies['user-messages'].keptIndices));
    assert.equal(raw[out.strategies['token-fraction'].tailStartIndex].role, 'user');
  });

  it('reads a session log too, and prints a readable table without --json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-cli-'));
    const log = join(dir, 's.jsonl');
    const ev = (o: object) => JSON.stringify(o);
    const msg = (id: string, role: string, content: string) =>
      ev({ type: 'message', message: { role, content, id, timestamp: 1, kind: 'normal' } });
    writeFileSync(
      log,
      [
        ev({ type: 'session', v: 1, id: 's1', createdAt: 1 }),
        msg('a', 'system', 'sys'),
        msg('b', 'user', 'hello'),
        msg('c', 'assistant', 'hi'),
      ].join('\n') + '\n',
    );
    const r = run('inspect', '--session', log);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /3 messages, 1 turns/);
    assert.match(r.stdout, /user-messages\s+tail starts at\s+1 /);
    // 30% of 15 tokens is the last message alone, and no user message follows it
    assert.match(r.stdout, /token-fraction\s+tail starts at\s+2 /);
  });

  it('fails with a clear message naming the line of a damaged log, and leaves it as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-cli-'));
    const log = join(dir, 'bad.jsonl');
    const text = JSON.stringify({ type: 'session', v: 1, id: 's1', createdAt: 1 }) + '\n{"type":"message","message":{"role":"user"}}\n';
    writeFileSync(log, text);
    const r = run('inspect', '--session', log);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /damaged at line 2/);
    assert.equal(r.stdout, '');
    assert.equal(readFileSync(log, 'utf8'), text);
  });

  it('never writes: no backup of a damaged log, and a torn last line is skipped in memory only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-cli-'));
    const header = JSON.stringify({ type: 'session', v: 1, id: 's1', createdAt: 1 });
    const user = JSON.stringify({ type: 'message', message: { role: 'user', content: 'hello', id: 'a', timestamp: 1, kind: 'normal' } });
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, `${header}\ngarbage\n`);
    const torn = join(dir, 'torn.jsonl');
    writeFileSync(torn, `${header}\n${user}\n{"type":"mess`);
    for (let i = 0; i < 2; i++) assert.equal(run('inspect', '--session', bad).status, 1);
    const r = run('inspect', '--session', torn, '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).messages.length, 1);
    assert.match(r.stderr, /incomplete last line 3.*not changed/);
    assert.deepEqual(readdirSync(dir).sort(), ['bad.jsonl', 'torn.jsonl']);
    assert.equal(readFileSync(torn, 'utf8'), `${header}\n${user}\n{"type":"mess`);
  });

  it('rejects bad usage with exit code 2 and the command help', () => {
    const r = run('inspect', '--sesion', 'x');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /Unknown option '--sesion'/);
    assert.match(r.stderr, /splitpoint inspect --session FILE/);
    assert.equal(run('inspect').status, 2);
    assert.equal(run('frobnicate').status, 2);
  });

  it('reports a missing file as an error, not a crash', () => {
    const r = run('inspect', '--session', '/nonexistent/s.json');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /No such file: \/nonexistent\/s\.json/);
  });
});
