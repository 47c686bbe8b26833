import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capToolOutput, MAX_TOOL_OUTPUT_CHARS } from '../../src/core/agent/toolOutput';
import type { AgentTool } from '../../src/core/agent/tools';
import { fileSpill, nodeWorkspaceTools } from '../../src/node/tools';
import { isAllowlisted, runCommandTool } from '../../src/node/tools/runCommandTool';

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'sp-tools-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\nexport const b = 2;\n');
  const outside = mkdtempSync(join(tmpdir(), 'sp-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
  const tools = new Map(nodeWorkspaceTools(root).map((t) => [t.spec.function.name, t] as const));
  return { root, outside, tool: (n: string) => tools.get(n)! };
}

const ctx = () => ({ signal: new AbortController().signal, callId: 'call_1' });
const run = (t: AgentTool, args: Record<string, unknown>) => t.execute(args, ctx());

describe('Node workspace tools', () => {
  it('read_file reads whole files and line ranges', async () => {
    const { tool } = setup();
    assert.equal((await run(tool('read_file'), { path: 'src/a.ts' })).content, 'export const a = 1;\nexport const b = 2;\n');
    assert.equal(
      (await run(tool('read_file'), { path: 'src/a.ts', startLine: 2, endLine: 2 })).content,
      '[lines 2-2 of 3]\nexport const b = 2;',
    );
    const missing = await run(tool('read_file'), { path: 'src/nope.ts' });
    assert.equal(missing.isError, true);
  });

  it('refuses paths outside the workspace, including through ../ and symlinks', async () => {
    const { root, outside, tool } = setup();
    await assert.rejects(run(tool('read_file'), { path: '../' + outside.split('/').pop() + '/secret.txt' }), /outside the workspace/);
    await assert.rejects(run(tool('read_file'), { path: join(outside, 'secret.txt') }), /outside the workspace/);
    symlinkSync(outside, join(root, 'link'));
    await assert.rejects(run(tool('read_file'), { path: 'link/secret.txt' }), /outside the workspace/);
    await assert.rejects(run(tool('write_file'), { path: 'link/new.txt', content: 'x' }), /outside the workspace/);
    assert.equal(existsSync(join(outside, 'new.txt')), false);
  });

  it('edit_file replaces exactly one occurrence and refuses ambiguous or missing text', async () => {
    const { root, tool } = setup();
    assert.match((await run(tool('edit_file'), { path: 'src/a.ts', old_text: 'a = 1', new_text: 'a = 10' })).content, /Edited src\/a\.ts/);
    assert.match(readFileSync(join(root, 'src', 'a.ts'), 'utf8'), /a = 10/);
    const ambiguous = await run(tool('edit_file'), { path: 'src/a.ts', old_text: 'export const', new_text: 'x' });
    assert.equal(ambiguous.isError, true);
    assert.match(ambiguous.content, /more than once/);
    const missing = await run(tool('edit_file'), { path: 'src/a.ts', old_text: 'zzz', new_text: 'x' });
    assert.match(missing.content, /not found/);
  });

  it('write_file and edit_file need approval; reads do not', () => {
    const { tool } = setup();
    assert.equal(tool('write_file').needsApproval({ path: 'x', content: '' }), true);
    assert.equal(tool('edit_file').needsApproval({}), true);
    assert.equal(tool('read_file').needsApproval({ path: 'x' }), false);
    assert.equal(tool('run_command').needsApproval({ command: 'ls' }), true);
  });

  it('list_files and search_text find workspace content', async () => {
    const { tool } = setup();
    assert.match((await run(tool('list_files'), { path: '.' })).content, /src\/a\.ts/);
    const found = await run(tool('search_text'), { pattern: 'const b' });
    assert.match(found.content, /src\/a\.ts:2:/);
    await assert.rejects(run(tool('search_text'), { pattern: '(' }), /not a valid regular expression/);
  });
});

describe('run_command', () => {
  it('captures output and the exit code', async () => {
    const { root } = setup();
    const t = runCommandTool(root, { allowlist: [], defaultTimeoutSeconds: 10, maxOutputChars: 10_000 });
    const ok = await run(t, { command: 'echo hello && echo err 1>&2' });
    assert.match(ok.content, /hello/);
    assert.match(ok.content, /err/);
    assert.match(ok.content, /\[exit code 0\]/);
    const bad = await run(t, { command: 'exit 3' });
    assert.equal(bad.isError, true);
    assert.match(bad.content, /\[exit code 3\]/);
  });

  it('kills the whole process group on timeout and on abort', async () => {
    const { root } = setup();
    const t = runCommandTool(root, { allowlist: [], defaultTimeoutSeconds: 10, maxOutputChars: 10_000 });
    const started = Date.now();
    const slow = await run(t, { command: 'sleep 30 & sleep 30; echo never', timeoutSeconds: 1 });
    assert.match(slow.content, /killed: timed out after 1 s/);
    assert.ok(Date.now() - started < 5000);
    const ctl = new AbortController();
    const p = t.execute({ command: 'sleep 30' }, { signal: ctl.signal, callId: 'c' });
    setTimeout(() => ctl.abort(), 100);
    assert.match((await p).content, /stopped by the user/);
  });

  it('caps captured output', async () => {
    const { root } = setup();
    const t = runCommandTool(root, { allowlist: [], defaultTimeoutSeconds: 10, maxOutputChars: 1000 });
    const r = await run(t, { command: 'yes x | head -c 100000' });
    assert.match(r.content, /more chars of output not captured/);
    assert.ok(r.content.length < 1200);
  });

  it('allowlists exact commands and prefixes, but never chained or redirected ones', () => {
    const list = ['npm test', 'git status'];
    assert.equal(isAllowlisted('npm test', list), true);
    assert.equal(isAllowlisted('npm test -- --grep x', list), true);
    assert.equal(isAllowlisted('npm testing', list), false);
    assert.equal(isAllowlisted('npm test; rm -rf /', list), false);
    assert.equal(isAllowlisted('npm test && curl x', list), false);
    assert.equal(isAllowlisted('git status > out', list), false);
    assert.equal(isAllowlisted('git status $(rm x)', list), false);
  });
});

describe('huge tool output', () => {
  it('a 10 MB output is cut to head and tail, and the full text is saved to a spill file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-spill-'));
    const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    assert.ok(lines.length > 9_000_000);
    const out = await capToolOutput(lines, 'call_big', fileSpill(dir));
    assert.ok(out.length <= MAX_TOOL_OUTPUT_CHARS + 500);
    assert.match(out, /^line 0 /);
    assert.match(out, /line 199999 x+\n\[Output truncated/);
    const where = /saved at (\S+)\./.exec(out)![1]!;
    assert.equal(readFileSync(where, 'utf8'), lines, 'nothing is lost');
  });

  it('a reused call id, or ids that sanitise to one name, never overwrite an earlier spilled output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-spill-'));
    const spill = fileSpill(dir);
    const paths = [
      await spill.spill('call/1', 'first'),
      await spill.spill('call/1', 'second, same id'),
      await spill.spill('call:1', 'third, same sanitised name'),
      await spill.spill('call_1-2', 'fourth, the name of a suffixed one'),
    ];
    assert.equal(new Set(paths).size, 4, paths.join());
    assert.deepEqual(
      paths.map((p) => readFileSync(p, 'utf8')),
      ['first', 'second, same id', 'third, same sanitised name', 'fourth, the name of a suffixed one'],
    );
    assert.ok(paths.every((p) => p.startsWith(dir)));
  });

  it('small outputs pass through untouched', async () => {
    assert.equal(await capToolOutput('ok', 'c', undefined), 'ok');
  });
});
