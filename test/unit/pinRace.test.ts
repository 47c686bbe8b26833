import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPin } from '../../src/core/agent/pinTool';
import { SessionStateError } from '../../src/core/session/errors';
import type { PinItem } from '../../src/core/session/schema';
import { SessionStore } from '../../src/core/session/sessionStore';
import type { SessionStorage } from '../../src/core/session/storage';
import { PinActions } from '../../src/host/pinActions';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

/** Pin changes that overlap (webview messages and the agent's `pin` tool run concurrently) must all survive. */
describe('pins changed concurrently', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  function storages(): Array<[string, () => { storage: SessionStorage; path: string }]> {
    return [
      ['in memory', () => ({ storage: new MemoryStorage(), path: '/s/a.jsonl' })],
      [
        'on disk',
        () => {
          const dir = mkdtempSync(join(tmpdir(), 'splitpoint-pins-'));
          dirs.push(dir);
          return { storage: new NodeFileStorage(), path: join(dir, 'a.jsonl') };
        },
      ],
    ];
  }

  async function setup(make: () => { storage: SessionStorage; path: string }) {
    const { storage, path } = make();
    const d = { storage, ids: counterIds(), clock: fixedClock() };
    const store = await SessionStore.create(d, path, 'pins');
    const notices: string[] = [];
    const user = new PinActions(store, d.ids, d.clock, (_level, text) => notices.push(text));
    const texts = (s: SessionStore): string[] => s.snapshot.pins.map((p) => p.text);
    const reopened = async (): Promise<string[]> => texts(await SessionStore.open(d, path));
    return { d, store, user, notices, texts, reopened };
  }

  for (const [where, make] of storages()) {
    describe(where, () => {
      it('an agent pin and a user pin started together both survive, in memory and after reopening', async () => {
        const { d, store, user, texts, reopened } = await setup(make);
        const agent = addPin(store, { text: 'never drop the users table', kind: 'constraint', source: 'agent' }, d.ids, d.clock);
        const mine = user.pin('keep the public handler names', 'constraint', null);
        await Promise.all([agent, mine]);
        const want = ['never drop the users table', 'keep the public handler names'];
        assert.deepEqual(texts(store), want);
        assert.deepEqual(await reopened(), want);
        assert.deepEqual(
          store.snapshot.pins.map((p) => p.source),
          ['agent', 'user'],
        );
      });

      it('many addPin calls without awaiting each other all land once; a concurrent duplicate is refused', async () => {
        const { d, store, texts, reopened } = await setup(make);
        const add = (text: string) => addPin(store, { text, kind: 'open-loop', source: 'agent' }, d.ids, d.clock);
        const results = await Promise.all([add('a'), add('b'), add('a'), add('c')]);
        assert.deepEqual(
          results.map((r) => r?.text),
          ['a', 'b', undefined, 'c'],
        );
        assert.deepEqual(texts(store), ['a', 'b', 'c']);
        assert.deepEqual(await reopened(), ['a', 'b', 'c']);
        assert.equal(new Set(store.snapshot.pins.map((p) => p.id)).size, 3, 'every pin has its own id');
      });

      it('an unpin racing an add: the add survives and the unpinned item does not come back (either order)', async () => {
        const { d, store, user, texts, reopened } = await setup(make);
        const a = (await addPin(store, { text: 'a', kind: 'constraint', source: 'user' }, d.ids, d.clock))!;
        const b = (await addPin(store, { text: 'b', kind: 'constraint', source: 'user' }, d.ids, d.clock))!;

        await Promise.all([user.unpin(a.id), addPin(store, { text: 'c', kind: 'constraint', source: 'agent' }, d.ids, d.clock)]);
        assert.deepEqual(texts(store), ['b', 'c']);

        await Promise.all([addPin(store, { text: 'd', kind: 'open-loop', source: 'agent' }, d.ids, d.clock), user.unpin(b.id)]);
        assert.deepEqual(texts(store), ['c', 'd']);
        assert.deepEqual(await reopened(), ['c', 'd']);
      });

      it('an edit racing an add and an unpin keeps all three changes', async () => {
        const { d, store, user, texts, reopened } = await setup(make);
        const a = (await addPin(store, { text: 'a', kind: 'constraint', source: 'user' }, d.ids, d.clock))!;
        const b = (await addPin(store, { text: 'b', kind: 'constraint', source: 'user' }, d.ids, d.clock))!;
        await Promise.all([
          user.edit(a.id, 'a, edited'),
          addPin(store, { text: 'c', kind: 'open-loop', source: 'agent' }, d.ids, d.clock),
          user.unpin(b.id),
        ]);
        assert.deepEqual(texts(store), ['a, edited', 'c']);
        assert.deepEqual(await reopened(), ['a, edited', 'c']);
      });
    });
  }

  describe('updatePins', () => {
    const pin = (id: string, text: string): PinItem => ({ id, text, kind: 'constraint', source: 'user', createdAt: 1 });
    const lines = (s: MemoryStorage) => s.files.get('/s/a.jsonl')!.trimEnd().split('\n').length;

    async function memory() {
      const storage = new MemoryStorage();
      const d = { storage, ids: counterIds(), clock: fixedClock() };
      return { storage, d, store: await SessionStore.create(d, '/s/a.jsonl') };
    }

    it('sees the pins of every change queued before it, and writes nothing for undefined or an unchanged list', async () => {
      const { storage, store } = await memory();
      const seen: string[][] = [];
      const set = store.updatePins(() => [pin('p1', 'one')]);
      const update = store.updatePins((pins) => {
        seen.push(pins.map((p) => p.id));
        return [...pins, pin('p2', 'two')];
      });
      await Promise.all([set, update]);
      assert.deepEqual(seen, [['p1']]);
      assert.deepEqual(
        store.snapshot.pins.map((p) => p.id),
        ['p1', 'p2'],
      );

      const before = lines(storage);
      let events = 0;
      store.onEvent(() => events++);
      assert.equal(await store.updatePins(() => undefined), false);
      assert.equal(await store.updatePins((pins) => pins.filter((p) => p.id !== 'missing')), false);
      assert.equal(await store.updatePins((pins) => [...pins]), false);
      assert.equal(lines(storage), before, 'no line written');
      assert.equal(events, 0, 'no event announced');
      assert.equal(await store.updatePins((pins) => pins.slice(1)), true);
      assert.equal(events, 1);
    });

    it('a failed write or an invalid list rejects and leaves the pins as they were; later changes still go through', async () => {
      const { storage, d, store } = await memory();
      await store.updatePins(() => [pin('p1', 'one')]);
      storage.failNextAppend = new Error('EIO: disk full');
      const failing = store.updatePins((pins) => [...pins, pin('p2', 'two')]);
      const next = store.updatePins((pins) => [...pins, pin('p3', 'three')]);
      await assert.rejects(failing, /disk full/);
      await next;
      assert.deepEqual(
        store.snapshot.pins.map((p) => p.id),
        ['p1', 'p3'],
      );
      await assert.rejects(
        store.updatePins((pins) => [...pins, { id: 'bad' } as PinItem]),
        SessionStateError,
      );
      await assert.rejects(
        store.updatePins(() => {
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.deepEqual(
        (await SessionStore.open(d, '/s/a.jsonl')).snapshot.pins.map((p) => p.id),
        ['p1', 'p3'],
      );
    });

    it('is refused on a read-only session', async () => {
      const { d } = await memory();
      const ro = await SessionStore.open(d, '/s/a.jsonl', { readOnly: true });
      await assert.rejects(
        ro.updatePins((pins) => [...pins, pin('p1', 'one')]),
        /read-only/,
      );
    });
  });

  it('the edit of a pin that is gone, or that does not change its text, writes nothing', async () => {
    const storage = new MemoryStorage();
    const d = { storage, ids: counterIds(), clock: fixedClock() };
    const store = await SessionStore.create(d, '/s/a.jsonl');
    const user = new PinActions(store, d.ids, d.clock, () => undefined);
    await user.pin('a', 'constraint', null);
    const before = storage.files.get('/s/a.jsonl');
    await user.edit(store.snapshot.pins[0]!.id, '  a ');
    await user.edit('pin_missing', 'b');
    await user.unpin('pin_missing');
    assert.equal(storage.files.get('/s/a.jsonl'), before);
    assert.deepEqual(
      store.snapshot.pins.map((p) => p.text),
      ['a'],
    );
  });
});
