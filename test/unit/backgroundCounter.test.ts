import assert from 'node:assert/strict';
import { join } from 'node:path';
import { importMessages } from '../../src/core/session/importMessages';
import { SessionStore } from '../../src/core/session/sessionStore';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { BackgroundCounter, primeCounts } from '../../src/node/backgroundCounter';
import { generateSession } from '../fixtures/generateSession';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

describe('counting off the host thread', function () {
  this.timeout(60_000);
  const counters: BackgroundCounter[] = [];
  after(async () => {
    for (const c of counters) await c.dispose();
  });

  async function imported() {
    const d = { storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() };
    const raw = generateSession({ seed: 5, targetChars: 300_000 });
    const store = await SessionStore.importArray(d, '/s/imp.jsonl', raw);
    return { d, store };
  }

  it('counts an imported session on a worker, stores the counts, and the reopened session needs none', async () => {
    const counter = new BackgroundCounter(join(__dirname, '..', '..', 'src', 'node', 'countWorker.ts'));
    counters.push(counter);
    const { d, store } = await imported();
    const n = store.snapshot.messages.length;
    assert.equal(store.uncounted().length, n);
    assert.equal(await primeCounts(store, counter), n);
    assert.ok(counter.onWorker, 'the worker ran');
    const local = await loadTiktokenCounter();
    for (const m of store.snapshot.messages) assert.equal(m.tokens, local.countMessage(m), m.id);
    const reopened = await SessionStore.open(d, '/s/imp.jsonl');
    assert.equal(reopened.uncounted().length, 0);
    assert.deepEqual(
      reopened.snapshot.messages.map((m) => m.tokens),
      store.snapshot.messages.map((m) => m.tokens),
    );
    assert.equal(await primeCounts(reopened, counter), 0, 'warm: nothing counted, nothing written');
  });

  it('counts here, in slices, when no worker can start', async () => {
    const counter = new BackgroundCounter(join(__dirname, 'no-such-worker.js'));
    counters.push(counter);
    const msgs = importMessages(generateSession({ seed: 6, targetChars: 40_000 }), counterIds(), fixedClock());
    const counts = await counter.count(msgs);
    const local = await loadTiktokenCounter();
    assert.deepEqual(
      counts,
      msgs.map((m) => local.countMessage(m)),
    );
    assert.equal(counter.onWorker, false);
  });
});
