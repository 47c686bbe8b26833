import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdtempSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTool } from '../../src/core/agent/tools';
import { nodeWorkspaceTools } from '../../src/node/tools';
import { insideWorkspace, resolveWorkspacePath, writeNoFollow } from '../../src/node/tools/workspacePath';

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'sp-paths-'));
  const outside = mkdtempSync(join(tmpdir(), 'sp-paths-out-'));
  const tools = new Map(nodeWorkspaceTools(root).map((t) => [t.spec.function.name, t] as const));
  return { root, outside, tool: (n: string) => tools.get(n)! };
}
const run = (t: AgentTool, args: Record<string, unknown>) => t.execute(args, { signal: new AbortController().signal, callId: 'c' });

describe('paths: links are followed to the end, or refused', () => {
  it('a dangling link to a file outside cannot be written through', async () => {
    const { root, outside, tool } = setup();
    symlinkSync(join(outside, 'created.txt'), join(root, 'dangling'));
    await assert.rejects(
      run(tool('write_file'), { path: 'dangling', content: 'pwned' }),
      /outside the workspace \(dangling is a link to .*created\.txt\)/,
    );
    assert.equal(existsSync(join(outside, 'created.txt')), false);
    assert.match(tool('write_file').describe({ path: 'dangling', content: 'x' }), /refused: .*dangling is a link to/);
  });

  it('a dangling link to a missing folder outside is refused for files below it', async () => {
    const { root, outside, tool } = setup();
    symlinkSync(join(outside, 'nowhere'), join(root, 'dir'));
    await assert.rejects(run(tool('write_file'), { path: 'dir/sub/f.txt', content: 'x' }), /outside the workspace/);
    assert.equal(existsSync(join(outside, 'nowhere')), false);
  });

  it('a link inside the workspace is followed, and the prompt says what the link is', async () => {
    const { root, tool } = setup();
    mkdirSync(join(root, 'real'));
    writeFileSync(join(root, 'real', 'a.txt'), 'one\n');
    symlinkSync(join(root, 'real', 'a.txt'), join(root, 'alias'));
    symlinkSync('real/new.txt', join(root, 'pending'));
    assert.match(tool('edit_file').describe({ path: 'alias' }), /^edit alias \(alias is a link to .*real\/a\.txt\)$/);
    assert.match((await run(tool('edit_file'), { path: 'alias', old_text: 'one', new_text: 'two' })).content, /Edited real\/a\.txt/);
    assert.equal(readFileSync(join(root, 'real', 'a.txt'), 'utf8'), 'two\n');
    assert.ok(lstatSync(join(root, 'alias')).isSymbolicLink(), 'the link itself is left alone');
    await run(tool('write_file'), { path: 'pending', content: 'new' });
    assert.equal(readFileSync(join(root, 'real', 'new.txt'), 'utf8'), 'new');
  });

  it('resolves .. physically after a link and refuses loops', () => {
    const { root, outside } = setup();
    mkdirSync(join(root, 'a'));
    symlinkSync(outside, join(root, 'a', 'up'));
    assert.throws(() => resolveWorkspacePath(root, 'a/up/../x'), /outside the workspace/);
    symlinkSync('loop', join(root, 'loop'));
    assert.throws(() => resolveWorkspacePath(root, 'loop'), /too many symbolic links/);
  });

  it('a missing folder followed by .. cannot smuggle a link past the check (read, search, write)', async () => {
    const { root, outside, tool } = setup();
    writeFileSync(join(outside, 'id_rsa'), 'SECRET KEY');
    symlinkSync(outside, join(root, 'docs'));
    // Read as text, `nope/../docs/id_rsa` is `docs/id_rsa`, whose link was never looked at; the kernel refuses it.
    assert.throws(() => resolveWorkspacePath(root, 'nope/../docs/id_rsa'), /goes up \(\.\.\) out of nope, which does not exist/);
    await assert.rejects(run(tool('read_file'), { path: 'nope/../docs/id_rsa' }), /which does not exist/);
    await assert.rejects(run(tool('search_text'), { pattern: 'SECRET', path: 'nope/../docs' }), /which does not exist/);
    await assert.rejects(run(tool('write_file'), { path: 'nope/../docs/authorized_keys', content: 'x' }), /which does not exist/);
    assert.equal(existsSync(join(outside, 'authorized_keys')), false);
    assert.match(tool('write_file').describe({ path: 'nope/../docs/k', content: 'x' }), /refused: .*which does not exist/);
    // Through the link itself the path is outside, as before; a missing folder without .. after it is still fine.
    assert.throws(() => resolveWorkspacePath(root, 'docs/id_rsa'), /outside the workspace/);
    assert.equal(resolveWorkspacePath(root, 'new/dir/f.txt').path, join(realpathSync(root), 'new', 'dir', 'f.txt'));
  });

  it("a listing that follows links keeps only files whose folder is really inside (VS Code's findFiles follows them)", () => {
    const { root, outside } = setup();
    mkdirSync(join(outside, '.ssh'));
    writeFileSync(join(outside, '.ssh', 'id_rsa'), 'k');
    symlinkSync(outside, join(root, 'home'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'a.ts'), '');
    const inside = insideWorkspace(root);
    assert.equal(inside(join(root, 'src', 'a.ts')), true);
    assert.equal(inside(join(root, 'top.txt')), true);
    assert.equal(inside(join(root, 'home', '.ssh', 'id_rsa')), false);
    assert.equal(inside(join(root, 'home', 'x')), false);
  });

  it('writes do not follow a link swapped in after the check (O_NOFOLLOW)', async () => {
    const { root, outside } = setup();
    writeFileSync(join(outside, 'victim.txt'), 'safe');
    symlinkSync(join(outside, 'victim.txt'), join(root, 'swapped'));
    await assert.rejects(writeNoFollow(join(root, 'swapped'), 'pwned'), /became a symbolic link/);
    assert.equal(readFileSync(join(outside, 'victim.txt'), 'utf8'), 'safe');
  });

  it('the Node edit_file shares the host proposal logic and keeps CRLF line endings', async () => {
    const { root, tool } = setup();
    writeFileSync(join(root, 'win.txt'), 'alpha\r\nbeta\r\ngamma\r\n');
    const r = await run(tool('edit_file'), { path: 'win.txt', old_text: 'alpha\nbeta', new_text: 'alpha\nBETA\nextra' });
    assert.equal(r.isError, undefined, r.content);
    assert.equal(readFileSync(join(root, 'win.txt'), 'utf8'), 'alpha\r\nBETA\r\nextra\r\ngamma\r\n');
  });
});

describe('NodeFileStorage.create is all or nothing', () => {
  it('creates the file whole, refuses an existing one, and leaves no temporary file', async () => {
    const { NodeFileStorage } = await import('../../src/node/fileStorage');
    const { readdirSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'sp-create-'));
    const storage = new NodeFileStorage();
    await storage.create(join(dir, 's.jsonl'), '{"type":"session"}\n');
    assert.equal(readFileSync(join(dir, 's.jsonl'), 'utf8'), '{"type":"session"}\n');
    await assert.rejects(storage.create(join(dir, 's.jsonl'), 'other\n'), /EEXIST/);
    assert.equal(readFileSync(join(dir, 's.jsonl'), 'utf8'), '{"type":"session"}\n');
    assert.deepEqual(readdirSync(dir), ['s.jsonl']);
  });
});
