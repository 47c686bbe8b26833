import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, symlinkSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeWorkspaceTools } from '../../src/node/tools';
import { commandEnvironment } from '../../src/node/tools/commandEnv';
import { checkAllowlisted, isAllowlisted, runCommandTool } from '../../src/node/tools/runCommandTool';
import { sandboxDescription, sandboxStatus } from '../../src/node/tools/sandbox';
import { shellWords } from '../../src/node/tools/shellWords';

const ctx = () => ({ signal: new AbortController().signal, callId: 'c1' });
const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), 'sp-cmd-'));
  mkdirSync(join(root, 'src'));
  return root;
};

describe('commands get a minimal environment', () => {
  it('the API key and other secrets do not reach a command', async () => {
    const saved = { ...process.env };
    process.env.SPLITPOINT_API_KEY = 'sk-live-123';
    process.env.OPENAI_API_KEY = 'sk-openai-456';
    process.env.GITHUB_TOKEN = 'ghp_789';
    try {
      const t = runCommandTool(workspace(), { allowlist: [], defaultTimeoutSeconds: 10, maxOutputChars: 10_000 });
      const r = await t.execute({ command: 'env; printenv SPLITPOINT_API_KEY' }, ctx());
      assert.match(r.content, /PATH=/);
      assert.doesNotMatch(r.content, /sk-live-123|sk-openai-456|ghp_789/);
    } finally {
      process.env = saved;
    }
  });

  it('passes exactly the listed names; a prefix never passes credential-like names', () => {
    const from = { PATH: '/bin', LC_ALL: 'C', LC_API_KEY: 'x', MY_TOKEN: 't', OTHER: 'o', NPM_TOKEN: 'n' };
    const env = commandEnvironment(['PATH', 'LC_*', 'NPM_TOKEN', 'MY*'], from);
    assert.equal(env.PATH, '/bin');
    assert.equal(env.LC_ALL, 'C');
    assert.equal(env.NPM_TOKEN, 'n', 'named exactly: passed on purpose');
    assert.equal(env.LC_API_KEY, undefined);
    assert.equal(env.MY_TOKEN, undefined);
    assert.equal(env.OTHER, undefined);
  });
});

describe('the allowlist matches the parsed argument vector', () => {
  const root = workspace();
  const outside = mkdtempSync(join(tmpdir(), 'sp-out-'));
  symlinkSync(outside, join(root, 'out-link'));
  const list = ['git diff', 'ls', 'npm test'];

  it('options that write files or move the working tree ask (git diff --output=/elsewhere)', () => {
    for (const c of [
      'git diff --output=/elsewhere/file',
      'git diff --output /elsewhere/file',
      'git diff "--output=/x"',
      'git diff -o x',
      'git diff -C ..',
      'git diff --git-dir=/tmp/x',
      'git diff --work-tree=..',
      'git diff --exec-path=/tmp',
    ]) {
      assert.equal(isAllowlisted(c, list, root), false, c);
    }
    assert.match((checkAllowlisted('git diff --output=/x', list, root) as { why: string }).why, /--output/);
  });

  it('paths outside the workspace ask: ls /, ls ../.., a symlink out (and up from it), ~ and .* globs', () => {
    for (const c of [
      'ls /',
      'ls ../..',
      'ls src/../..',
      'ls out-link',
      'ls out-link/x',
      // The kernel goes up from where the link points: out of the workspace, though as text it is back inside.
      'ls out-link/..',
      'ls out-link/../sibling',
      'ls nope/../out-link/x',
      'ls ~',
      'ls ~/x',
      'ls .*',
      'ls src/.*',
      `ls ${outside}`,
      'ls --color=/etc',
    ]) {
      assert.equal(isAllowlisted(c, list, root), false, c);
    }
  });

  it('ordinary arguments inside the workspace still run without asking', () => {
    for (const c of [
      'git diff',
      'git diff --stat src',
      'git diff HEAD~1 -- src/a.ts',
      'ls src',
      'ls -la',
      'npm test -- --grep "a b"',
      'ls *.ts',
    ]) {
      assert.equal(isAllowlisted(c, list, root), true, c);
    }
    assert.equal(isAllowlisted('npm testing', list, root), false);
    assert.equal(isAllowlisted('git diffx', list, root), false);
  });

  // Entries a user might add for read-only tools; what follows them must not run programs or write files.
  const tools = (
    'git|git diff|git ls-remote|ls|npm|npm test|rg|fd|find|sort|tsc|cargo check|sed|sed -n 1,5p|awk|tar|xargs|bash|go test|' +
    'npx|npx tsc|npx eslint|timeout 60 npm test|node scripts/check.js|python -m pytest'
  ).split('|');
  const asks = (c: string) => assert.equal(isAllowlisted(c, tools, root), false, c);

  it('options that run programs ask: rg --pre, find -exec/-ok, fd -x, git -c, tar --to-command', () => {
    for (const c of [
      'rg --pre=sh x src',
      'rg --pre sh x src',
      'rg --pre-glob=*.ts --pre=sh x',
      'rg --hostname-bin=sh x',
      "find . -exec rm '{}' ';'",
      "find src -execdir sh -c x ';'",
      "find . -ok rm '{}' ';'",
      "find . -okdir rm '{}' ';'",
      'fd -x rm',
      'fd -X rm',
      'fd --exec-batch rm',
      'git -c core.pager=sh log',
      'git -c core.sshCommand=x fetch',
      'git ls-remote -u sh origin',
      'sort --compress-program=sh src/a',
      'tar -tf a.tar --to-command=sh',
      'tar -tf a.tar --use-compress-program=sh',
      'tar -tIsh -f a.tar',
    ])
      asks(c);
  });

  it('options that write or delete files ask: find -delete/-fprint*/-fls, sed -i, tar x, tsc --outDir', () => {
    for (const c of [
      'find . -delete',
      'find src -fprint out',
      'find src -fprint0 out',
      'find src -fprintf out %p',
      'find src -fls out',
      'sed -n 1,5p -i src/a.ts',
      'sed -n 1,5p --in-place src/a.ts',
      'sed -n 1,5p -e w/x src/a.ts',
      'tar xf a.tar',
      'tar -xf a.tar',
      'tsc --outDir build',
    ])
      asks(c);
  });

  it('a risky letter anywhere in a cluster asks, and a value glued to any letter is path-checked (sort -uo/path)', () => {
    for (const c of [
      'sort -uo/home/u/.bashrc src/a',
      'sort -uofile src/a',
      'sort -nro out src/a',
      'rg -f/etc/passwd x src',
      'rg -nf../../x y',
    ])
      asks(c);
    assert.match((checkAllowlisted('sort -uofile src/a', tools, root) as { why: string }).why, /-o/);
  });

  it('abbreviated long options count as the option they abbreviate (--ou= is --output=)', () => {
    for (const c of [
      'sort --ou=out src/a',
      'sort --outp=out src/a',
      'git diff --ou=out',
      'git diff --ext',
      'rg --pr=sh x',
      'git config --glob core.pager sh',
      // One letter abbreviates too: --e is sed's --expression, --i its --in-place, --o sort's --output.
      "sed -n 1,5p --e='e touch /tmp/x' src/a",
      'sed -n 1,5p --i src/a',
      'sort --o=.git/config src/a',
      'go test -o /tmp/t ./...',
      'go test -exec=sh ./...',
      'go test --toolexec sh ./...',
    ])
      asks(c);
    assert.match((checkAllowlisted('sort --ou=out src/a', tools, root) as { why: string }).why, /--ou \(--output/);
  });

  it('programs that run what they are given ask unless the entry names it: xargs, sed and awk scripts, bash -c, npx', () => {
    for (const c of [
      'xargs rm',
      'sed s/a/b/w/x src/a',
      'sed 1e\\ id src/a',
      `awk 'BEGIN{system("id")}'`,
      'bash -c id',
      'npx evil',
      'npm exec evil',
      'timeout 60 npm test --foo',
      'ls of=~/x',
      'ls a=/etc',
    ])
      asks(c);
  });

  it('ordinary read-only uses of those tools still run without asking', () => {
    for (const c of [
      'git diff --stat src',
      'git diff --check',
      'git diff --output-indicator-new=+',
      'git log --oneline -5 --pretty=format:%h',
      'ls -la',
      'rg -n foo src',
      'rg -n --no-heading --glob=*.ts foo src',
      "rg -g '*.ts' -e foo src",
      'rg --files src',
      'npm test -- --grep "a b"',
      'sort -u src/a',
      'sort -k2,2 -t, src/a',
      "find src -name '*.ts'",
      'find src -type f -not -name x -newer src/a -print',
      'tar -tf a.tar',
      'tar tf a.tar',
      'sed -n 1,5p src/a.ts',
      'tsc --noEmit -p .',
      'cargo check --target wasm32-unknown-unknown',
      'node scripts/check.js --fast',
      'python -m pytest -x src',
      'timeout 60 npm test',
      'npx tsc --noEmit',
      'npx eslint --ext .ts src',
      'go test -count=1 -cover -json -short -timeout 60s ./...',
    ])
      assert.equal(isAllowlisted(c, tools, root), true, c);
  });

  it('the run_command tool asks for git diff --output even with git diff allowlisted', () => {
    const t = nodeWorkspaceTools(root, { allowlist: ['git diff'] }).find((x) => x.spec.function.name === 'run_command')!;
    assert.equal(t.needsApproval({ command: 'git diff --output=/elsewhere/file' }), true);
    assert.equal(t.needsApproval({ command: 'git diff' }), false);
  });

  it('shellWords splits like sh and refuses what sh would expand', () => {
    assert.deepEqual(
      shellWords(`a 'b c' "d \\"e\\"" f\\ g`)?.map((w) => w.text),
      ['a', 'b c', 'd "e"', 'f g'],
    );
    for (const bad of ['a $(b)', 'a "$HOME"', 'a `b`', 'a; b', 'a | b', 'a > b', "a 'b", 'a "b', 'a {b,c}', 'a # c', 'a\nb'])
      assert.equal(shellWords(bad), undefined, bad);
  });
});

const sandbox = sandboxStatus();
describe(`the command sandbox (${sandbox.available ? 'bwrap works here' : `unavailable: ${(sandbox as { reason: string }).reason}`})`, () => {
  it('says in the approval prompt whether the command is confined', () => {
    const t = runCommandTool(workspace(), { allowlist: [], defaultTimeoutSeconds: 10, maxOutputChars: 1000 });
    assert.match(
      t.describe({ command: 'make' }),
      sandbox.available ? /^run \(sandboxed: .*no network\): make$/ : /^run \(not sandboxed: .+\): make$/,
    );
    const off = runCommandTool(workspace(), {
      allowlist: [],
      defaultTimeoutSeconds: 10,
      maxOutputChars: 1000,
      sandbox: { mode: 'off', allowNetwork: false },
    });
    assert.match(off.describe({ command: 'make' }), /not sandboxed \(sandbox turned off/);
  });

  it('degrades with a clear reason where bwrap cannot run', () => {
    const broken = sandboxStatus('/bin/false');
    assert.equal(broken.available, false);
    assert.match(
      sandboxDescription({ mode: 'auto', allowNetwork: false }, broken),
      /not sandboxed: (bwrap cannot create a sandbox here|sandboxing needs Linux)/,
    );
  });

  it('a sandboxed command writes the workspace and /tmp but nothing else, and has no network', async function () {
    if (!sandbox.available) this.skip();
    const root = workspace();
    // Not under /tmp: the sandbox's /tmp is a private tmpfs, where the folder would simply not exist.
    const outside = mkdtempSync('/var/tmp/sp-out-');
    const server = createServer((_q, s) => s.end('reached')).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const t = runCommandTool(root, { allowlist: [], defaultTimeoutSeconds: 20, maxOutputChars: 10_000 });
      const r = await t.execute(
        { command: `echo in > inside.txt && echo t > /tmp/t.txt && echo out > ${outside}/escaped.txt; echo done` },
        ctx(),
      );
      assert.ok(existsSync(join(root, 'inside.txt')));
      assert.equal(existsSync(join(outside, 'escaped.txt')), false, r.content);
      assert.match(r.content, /Read-only file system/);
      const script =
        `require('http').get('http://127.0.0.1:${port}',r=>r.on('data',d=>console.log(String(d))))` +
        `.on('error',e=>console.log('neterr',e.code))`;
      const fetchCmd = `${process.execPath} -e "${script}"`;
      assert.match((await t.execute({ command: fetchCmd }, ctx())).content, /neterr/);
      const open = runCommandTool(root, {
        allowlist: [],
        defaultTimeoutSeconds: 20,
        maxOutputChars: 10_000,
        sandbox: { mode: 'auto', allowNetwork: true },
      });
      assert.match((await open.execute({ command: fetchCmd }, ctx())).content, /reached/);
    } finally {
      server.close();
    }
  });
});
