import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionCorruptError, SessionStateError, ImportError } from '../../src/core/session/errors';
import { SessionStore, parseLog } from '../../src/core/session/sessionStore';
import type { StoredMessage } from '../../src/core/messages';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

function deps(storage = new MemoryStorage()) {
  return { storage, ids: counterIds(), clock: fixedClock() };
}

async function seeded(storage = new MemoryStorage()) {
  const d = deps(storage);
  const store = await SessionStore.create(d, '/s/a.jsonl', 'demo');
  const sys = await store.append({ role: 'system', content: 'You are a coding agent.' });
  const u1 = await store.append({ role: 'user', content: 'Add a --json flag to inspect.' });
  const a1 = await store.append({ role: 'assistant', content: 'Decision: print one JSON object.' });
  const u2 = await store.append({ role: 'user', content: 'Now fix CRLF parsing in src/parser/lexer.ts.' });
  const a2 = await store.append({ role: 'assistant', content: 'Looking at lexer.ts.' });
  return { d, store, storage: d.storage, ids: { sys, u1, a1, u2, a2 } };
}

const summary = (id: string, content: string): StoredMessage => ({ role: 'user', content, id, timestamp: 1, kind: 'summary' });

describe('session store', () => {
  it('writes one JSON event per line and replays to the same state', async () => {
    const { store, storage, d } = await seeded();
    const text = storage.files.get('/s/a.jsonl')!;
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 6);
    assert.equal(JSON.parse(lines[0]!).type, 'session');
    const again = await SessionStore.open(d, '/s/a.jsonl');
    assert.deepEqual(again.snapshot.messages, store.snapshot.messages);
    assert.equal(again.snapshot.title, 'demo');
  });

  it('splices [system, pinned, summary, …tail] and undo peels compactions one layer at a time', async () => {
    const { store, ids, d } = await seeded();
    await store.updatePins(() => [{ id: 'p1', text: 'Never drop the users table', kind: 'constraint', source: 'user', createdAt: 1 }]);
    const c1 = await store.adoptCompaction({
      summary: summary('sum1', 'S1'),
      tailStartId: ids.u2.id,
      keptIds: [],
      coveredIds: [ids.u1.id, ids.a1.id],
      lastSnapshotId: ids.a2.id,
      strategy: 'token-fraction',
      depth: 1,
    });
    let active = store.active();
    assert.deepEqual(active.origins, ['system', 'pinned', 'summary', 'tail', 'tail']);
    assert.deepEqual(active.messages.map((m) => m.id).slice(2), ['sum1', ids.u2.id, ids.a2.id]);
    assert.match(active.messages[1]!.content!, /Never drop the users table/);

    const a3 = await store.append({ role: 'assistant', content: 'Fixed.' });
    const c2 = await store.adoptCompaction({
      summary: summary('sum2', 'S2'),
      tailStartId: a3.id,
      keptIds: [],
      coveredIds: ['sum1', ids.u2.id, ids.a2.id],
      lastSnapshotId: a3.id,
      strategy: 'manual',
      depth: 2,
    });
    active = store.active();
    assert.deepEqual(
      active.messages.map((m) => m.id),
      [ids.sys.id, 'pinned-block', 'sum2', a3.id],
    );
    assert.equal(store.archived().length, 4, 'every original outside the active context stays archived');

    assert.equal((await store.undoCompaction()).id, c2.id);
    assert.deepEqual(
      store.active().messages.map((m) => m.id),
      [ids.sys.id, 'pinned-block', 'sum1', ids.u2.id, ids.a2.id, a3.id],
    );
    assert.equal((await store.undoCompaction()).id, c1.id);
    assert.equal(store.active().messages.length, 7, 'system, pinned and all six originals');
    await assert.rejects(store.undoCompaction(), SessionStateError);

    const reopened = await SessionStore.open(d, '/s/a.jsonl');
    assert.equal(reopened.snapshot.compactions.length, 0);
    assert.equal(reopened.snapshot.undone.length, 2);
  });

  it('places the preserved user messages before the summary (preserve-user-messages strategy)', async () => {
    const { store, ids } = await seeded();
    await store.adoptCompaction({
      summary: summary('sum', 'S'),
      tailStartId: null,
      keptIds: [ids.u1.id, ids.u2.id],
      coveredIds: [ids.a1.id, ids.a2.id],
      lastSnapshotId: ids.a2.id,
      strategy: 'user-messages',
      depth: 1,
    });
    const later = await store.append({ role: 'user', content: 'next' });
    assert.deepEqual(
      store.active().messages.map((m) => m.id),
      [ids.sys.id, ids.u1.id, ids.u2.id, 'sum', later.id],
    );
  });

  it('rejects an event that contradicts the log without writing it', async () => {
    const { store, storage } = await seeded();
    const before = storage.files.get('/s/a.jsonl');
    await assert.rejects(
      store.adoptCompaction({
        summary: summary('x', 'x'),
        tailStartId: 'nope',
        keptIds: [],
        coveredIds: [],
        lastSnapshotId: null,
        strategy: 'manual',
        depth: 1,
      }),
      /unknown message nope/,
    );
    assert.equal(storage.files.get('/s/a.jsonl'), before);
  });

  it('leaves state unchanged when the disk write fails, so nothing is half-adopted', async () => {
    const { store, storage, ids } = await seeded();
    storage.failNextAppend = new Error('ENOSPC: no space left on device');
    await assert.rejects(
      store.adoptCompaction({
        summary: summary('s', 'S'),
        tailStartId: ids.u2.id,
        keptIds: [],
        coveredIds: [],
        lastSnapshotId: ids.a2.id,
        strategy: 'manual',
        depth: 1,
      }),
      /ENOSPC/,
    );
    assert.equal(store.snapshot.compactions.length, 0);
    assert.equal(store.active().compaction, undefined);
    // the next write still goes through, in order
    await store.append({ role: 'user', content: 'still here' });
    assert.equal(store.snapshot.messages.length, 6);
  });

  it('serialises concurrent appends in call order', async () => {
    const { store, d } = await seeded();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append({ role: 'user', content: `m${i}` })));
    const reopened = await SessionStore.open(d, '/s/a.jsonl');
    assert.deepEqual(
      reopened.snapshot.messages.slice(5).map((m) => m.content),
      Array.from({ length: 20 }, (_, i) => `m${i}`),
    );
  });

  it('refuses to create over an existing file', async () => {
    const { d } = await seeded();
    await assert.rejects(SessionStore.create(d, '/s/a.jsonl'), /EEXIST/);
  });
});

describe('session store: corrupt files', () => {
  async function corruptAt(mutate: (lines: string[]) => string) {
    const { storage, d } = await seeded();
    const lines = storage.files.get('/s/a.jsonl')!.trimEnd().split('\n');
    const bad = mutate(lines);
    storage.files.set('/s/a.jsonl', bad);
    const err = await SessionStore.open(d, '/s/a.jsonl').then(
      () => assert.fail('expected open to fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SessionCorruptError, String(err));
    assert.equal(storage.files.get('/s/a.jsonl'), bad, 'the damaged file is left exactly as it was');
    assert.ok(err.backupPath && storage.files.get(err.backupPath) === bad, 'a backup copy holds the same bytes');
    return err;
  }

  it('names the line with invalid JSON', async () => {
    const err = await corruptAt((l) => [...l.slice(0, 3), '{"type":"message", "message": {', ...l.slice(3)].join('\n') + '\n');
    assert.equal(err.line, 4);
    assert.match(err.message, /line 4: not valid JSON/);
  });

  it('names the line and field of an event that fails validation', async () => {
    const err = await corruptAt((l) => {
      const e = JSON.parse(l[2]!);
      e.message.role = 'wizard';
      l[2] = JSON.stringify(e);
      return l.join('\n') + '\n';
    });
    assert.equal(err.line, 3);
    assert.match(err.reason, /message\.role/);
  });

  it('reports an interrupted write of the header line as such', async () => {
    // The torn-last-line repair needs a header to keep; a torn header alone is refused.
    const err = await corruptAt(() => '{"type":"sess');
    assert.equal(err.line, 1);
    assert.match(err.reason, /incomplete/);
  });

  it('rejects a log whose undo does not match the compaction in force', async () => {
    const err = await corruptAt((l) => [...l, JSON.stringify({ type: 'undo', compactionId: 'c_9', at: 1 })].join('\n') + '\n');
    assert.match(err.reason, /undo of c_9/);
  });

  it('reports an empty file instead of treating it as an empty session', () => {
    const r = parseLog('');
    assert.equal(r.ok, false);
  });

  it('on a real disk: backs up, never overwrites, and the backup can be listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-store-'));
    const storage = new NodeFileStorage();
    const path = join(dir, 's.jsonl');
    const store = await SessionStore.create({ storage }, path);
    await store.append({ role: 'user', content: 'hello' });
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, good + 'garbage\n');
    await assert.rejects(SessionStore.open({ storage }, path), (e: unknown) => e instanceof SessionCorruptError && e.line === 3);
    assert.equal(readFileSync(path, 'utf8'), good + 'garbage\n');
    const backups = readdirSync(dir).filter((f) => f.includes('.corrupt-'));
    assert.equal(backups.length, 1);
    assert.equal(readFileSync(join(dir, backups[0]!), 'utf8'), good + 'garbage\n');
  });
});

describe('session import', () => {
  it('imports a plain OpenAI messages array, including content parts and the developer role', async () => {
    const d = deps();
    const raw = {
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read a.ts' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
        { role: 'assistant', content: 'Done.', reasoning_content: 'trivial' },
      ],
    };
    const store = await SessionStore.importArray(d, '/s/imp.jsonl', raw);
    const m = store.snapshot.messages;
    assert.equal(m.length, 5);
    assert.equal(m[0]!.role, 'system');
    assert.equal(m[1]!.content, 'Read a.ts\n[image_url omitted]');
    assert.equal(m[4]!.role === 'assistant' && m[4]!.reasoning, 'trivial');
    assert.ok(m.every((x) => x.kind === 'normal' && x.id.length > 0));
  });

  it('names the message that cannot be imported', async () => {
    const d = deps();
    await assert.rejects(
      SessionStore.importArray(d, '/s/x.jsonl', [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'zz', content: 'x' },
      ]),
      (e: unknown) => e instanceof ImportError && e.index === 1 && /no earlier assistant/.test(e.message),
    );
    await assert.rejects(SessionStore.importArray(d, '/s/y.jsonl', { foo: 1 }), ImportError);
    assert.equal(await d.storage.exists('/s/x.jsonl'), false, 'a failed import writes nothing');
  });
});
