import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '../../src/core/session/sessionStore';
import { SessionLibrary } from '../../src/host/sessionLibrary';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { SessionLockedError } from '../../src/core/session/errors';
import { exited, holdInChild } from './helpers/sessionLockHolder';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

describe('SessionLibrary.importText: a log whose last line is torn', () => {
  const make = () => {
    const storage = new MemoryStorage();
    return { storage, lib: new SessionLibrary(storage, '/ws/sessions', fixedClock(), counterIds()) };
  };

  /** A valid two-message log, written by the library itself. */
  async function validLog(storage: MemoryStorage, lib: SessionLibrary): Promise<string> {
    const { store } = await lib.create('src');
    await store.append({ role: 'user', content: 'hello' });
    await store.append({ role: 'assistant', content: 'hi there' });
    const text = (await storage.read(store.path))!;
    assert.ok(text.endsWith('\n'));
    return text;
  }

  it('imports the intact lines, says the last line was left out, and the session opens again', async () => {
    const { storage, lib } = make();
    const intact = await validLog(storage, lib);
    const torn = intact + '{"type":"message","message":{"role":"user","cont';
    const imported = await lib.importText(torn, '/tmp/torn.jsonl');
    assert.equal(imported.kind, 'log');
    assert.equal(imported.store.snapshot.messages.length, 2);
    assert.equal(await storage.read(imported.store.path), intact, 'only the intact part was written');
    assert.equal(imported.store.repairs.length, 1);
    assert.match(imported.store.repairs[0]!, /left out the incomplete last line 4 of \/tmp\/torn\.jsonl/);
    lib.invalidate(imported.id);
    const reopened = await lib.open(imported.id);
    assert.equal(reopened.snapshot.messages.length, 2);
    assert.deepEqual(reopened.repairs, [], 'the written file is clean');
    const entry = (await lib.list()).find((e) => e.id === imported.id);
    assert.ok(entry && !entry.damaged, 'listed as a healthy session');
  });

  it('a log that is whole imports with no repair note', async () => {
    const { storage, lib } = make();
    const intact = await validLog(storage, lib);
    const imported = await lib.importText(intact.slice(0, -1), '/tmp/unterminated.jsonl');
    assert.equal(await storage.read(imported.store.path), intact);
    assert.deepEqual(imported.store.repairs, []);
  });
});

describe('SessionLibrary.list: a session another process wrote', () => {
  it('is summarised again when its file changed size (the CLI compacted or ran it), and read from the cache when not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-library-'));
    const storage = new NodeFileStorage();
    const lib = new SessionLibrary(storage, dir, fixedClock(), counterIds());
    const { id, store } = await lib.create('elsewhere');
    await store.append({ role: 'user', content: 'first' });
    await store.close();
    const count = async () => (await lib.list()).find((e) => e.id === id)!.messageCount;
    assert.equal(await count(), 1);
    // `splitpoint run --session` on the same log, in another process: it appends two messages.
    const cli = await SessionStore.open({ storage: new NodeFileStorage('splitpoint run') }, lib.pathFor(id));
    await cli.append({ role: 'assistant', content: 'done' });
    await cli.append({ role: 'user', content: 'thanks' });
    await cli.close();
    assert.equal(await count(), 3);
    let reads = 0;
    const read = storage.read.bind(storage);
    storage.read = (p) => (reads++, read(p));
    assert.equal(await count(), 3);
    assert.equal(reads, 0, 'an unchanged file is not read again');
  });
});

describe('SessionLibrary.open: a session another process holds', () => {
  it('waits up to the time given for it to be freed (a reloading window), and without one refuses at once', async function () {
    this.timeout(20_000);
    const dir = mkdtempSync(join(tmpdir(), 'sp-library-'));
    const lib = new SessionLibrary(new NodeFileStorage(), dir, fixedClock(), counterIds());
    const { id, store } = await lib.create('held');
    await store.close();
    const other = await holdInChild(lib.pathFor(id));
    try {
      await assert.rejects(lib.open(id), SessionLockedError);
      setTimeout(() => other.stdin!.end(), 600);
      const t0 = performance.now();
      const opened = await lib.open(id, 10_000);
      assert.ok(performance.now() - t0 >= 500, 'it waited for the holder');
      await opened.close();
    } finally {
      other.kill('SIGKILL');
      await exited(other);
    }
  });
});
