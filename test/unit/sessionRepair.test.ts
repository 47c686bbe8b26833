import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionCorruptError, SessionStateError } from '../../src/core/session/errors';
import { INTERRUPTED_RESULT, isInterruptedResult, originalId } from '../../src/core/session/sessionState';
import { SessionStore, parseLog } from '../../src/core/session/sessionStore';
import { NodeFileStorage } from '../../src/node/fileStorage';
import type { Verdict } from '../../src/core/agent/judge';
import { Calibration } from '../../src/core/tokens/calibration';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const PATH = '/s/a.jsonl';

async function seeded() {
  const storage = new MemoryStorage();
  const clock = fixedClock();
  const d = { storage, ids: counterIds(), clock };
  const store = await SessionStore.create(d, PATH, 'demo');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  await store.append({ role: 'user', content: 'Fix the lexer.' });
  return { d, storage, clock, store };
}

const backups = (s: MemoryStorage, kind: string): string[] => [...s.files.keys()].filter((k) => k.includes(`.${kind}-`));

describe('session repair on open', () => {
  it('drops a torn last line, keeps the original as a backup once, and the next open is clean', async () => {
    const { d, storage } = await seeded();
    const good = storage.files.get(PATH)!;
    const torn = good + '{"type":"message","message":{"role":"assist';
    storage.files.set(PATH, torn);
    const store = await SessionStore.open(d, PATH);
    assert.equal(store.snapshot.messages.length, 2);
    assert.match(store.repairs.join(), /incomplete last line 4.*kept at/);
    assert.equal(storage.files.get(PATH), good, 'the torn line is cut off');
    assert.deepEqual(
      backups(storage, 'torn').map((k) => storage.files.get(k)),
      [torn],
    );
    await store.append({ role: 'assistant', content: 'On it.' });
    d.clock.advance(60_000);
    const again = await SessionStore.open(d, PATH);
    assert.equal(again.snapshot.messages.length, 3);
    assert.deepEqual(again.repairs, []);
    assert.equal(backups(storage, 'torn').length, 1, 'no second backup');
  });

  it('adds the newline a last line lost, so the next append does not join it', async () => {
    const { d, storage } = await seeded();
    storage.files.set(PATH, storage.files.get(PATH)!.trimEnd());
    const store = await SessionStore.open(d, PATH);
    await store.append({ role: 'assistant', content: 'ok' });
    const reopened = await SessionStore.open(d, PATH);
    assert.equal(reopened.snapshot.messages.length, 3);
  });

  it('backs a damaged file up once, however often it is opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-repair-'));
    const storage = new NodeFileStorage();
    const clock = fixedClock();
    const path = join(dir, 's.jsonl');
    const store = await SessionStore.create({ storage, clock }, path);
    await store.append({ role: 'user', content: 'hello' });
    writeFileSync(path, readFileSync(path, 'utf8') + 'garbage\n{"type":"focus","focus":null,"at":1}\n');
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await assert.rejects(SessionStore.open({ storage, clock }, path), (e: unknown) => e instanceof SessionCorruptError && e.line === 3);
    }
    assert.equal(readdirSync(dir).filter((f) => f.includes('.corrupt-')).length, 1);
  });

  it('read-only opening writes nothing: no backup, no repair on disk, and changes are refused', async () => {
    const { d, storage } = await seeded();
    const torn = storage.files.get(PATH)! + '{"type":"mess';
    storage.files.set(PATH, torn);
    const before = new Map(storage.files);
    const store = await SessionStore.open(d, PATH, { readOnly: true });
    assert.equal(store.snapshot.messages.length, 2);
    assert.match(store.repairs.join(), /incomplete last line/);
    await assert.rejects(store.append({ role: 'user', content: 'x' }), SessionStateError);
    store.uncounted()[0]!.tokens = 3;
    await assert.rejects(store.persistCounts('c'), SessionStateError);
    storage.files.set(PATH, torn.replace('"demo"', '"demo"}garbage'));
    before.set(PATH, storage.files.get(PATH)!);
    await assert.rejects(
      SessionStore.open(d, PATH, { readOnly: true }),
      (e: unknown) => e instanceof SessionCorruptError && e.backupPath === undefined,
    );
    assert.deepEqual(storage.files, before);
  });

  it('a damaged log says to import the copy only when a copy was made', async () => {
    const { d, storage } = await seeded();
    storage.files.set(PATH, storage.files.get(PATH)! + 'garbage\n');
    const readOnly = await SessionStore.open(d, PATH, { readOnly: true }).then(
      () => assert.fail('opened a damaged log'),
      (e: unknown) => e as SessionCorruptError,
    );
    assert.equal(readOnly.backupPath, undefined);
    assert.match(readOnly.message, /damaged at line 4: .*The file has not been changed; fix or remove that line\.$/);
    assert.doesNotMatch(readOnly.message, /copy/);
    const writing = await SessionStore.open(d, PATH).then(
      () => assert.fail('opened a damaged log'),
      (e: unknown) => e as SessionCorruptError,
    );
    assert.ok(writing.backupPath && storage.files.has(writing.backupPath));
    assert.ok(writing.message.includes(`A copy was saved to ${writing.backupPath}.`), writing.message);
    assert.match(writing.message, /fix or remove that line, or import the copy as a new session\.$/);
  });
});

describe('tool calls left without results', () => {
  const calls = [
    { id: 'c1', type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
    { id: 'c2', type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"b.ts"}' } },
  ];

  it('gets an "interrupted" result before the next message, in every active context', async () => {
    const { d, store } = await seeded();
    await store.append({ role: 'assistant', content: null, tool_calls: calls });
    await store.append({ role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' });
    // kill -9 here; the user goes on after reopening
    const reopened = await SessionStore.open(d, PATH);
    assert.deepEqual(
      reopened.active().messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool'],
      'a batch at the end may still be running and is left alone',
    );
    await reopened.append({ role: 'user', content: 'Continue.' });
    const msgs = reopened.active().messages;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'tool', 'user'],
    );
    const filled = msgs[4]!;
    assert.ok(
      filled.role === 'tool' && filled.tool_call_id === 'c2' && filled.content === INTERRUPTED_RESULT && isInterruptedResult(filled),
    );
    assert.equal(reopened.snapshot.messages.length, 5, 'the stand-in is not written to the log');
    assert.equal(originalId(filled.id), msgs[2]!.id, 'a compaction that splits there points at the call, which is in the log');
    assert.equal(reopened.archived().length, 0);
  });

  it('pairs calls whose batch was summarised around, and leaves complete batches untouched', async () => {
    const { store } = await seeded();
    await store.append({ role: 'assistant', content: null, tool_calls: calls });
    await store.append({ role: 'tool', tool_call_id: 'c1', content: 'a' });
    await store.append({ role: 'tool', tool_call_id: 'c2', content: 'b' });
    await store.append({ role: 'assistant', content: null, tool_calls: [calls[0]!] });
    await store.append({ role: 'assistant', content: 'done' });
    const msgs = store.active().messages;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(msgs.filter(isInterruptedResult).length, 1);
    assert.equal(store.active().origins.length, msgs.length);
  });
});

describe('stored token counts', () => {
  it('persists counts once and reopening restores them without counting', async () => {
    const { d, storage, store } = await seeded();
    assert.equal(store.uncounted().length, 2);
    for (const [i, m] of store.uncounted().entries()) m.tokens = 10 + i;
    assert.equal(await store.persistCounts('cl100k/bounded-16k'), 2);
    assert.equal(await store.persistCounts('cl100k/bounded-16k'), 0, 'nothing new to write');
    const lines = storage.files.get(PATH)!.trimEnd().split('\n');
    assert.equal(JSON.parse(lines.at(-1)!).type, 'counts');
    const reopened = await SessionStore.open(d, PATH);
    assert.deepEqual(
      reopened.snapshot.messages.map((m) => m.tokens),
      [10, 11],
    );
    assert.equal(reopened.uncounted().length, 0);
  });

  it('ignores counts made by another counter', async () => {
    const { d, store } = await seeded();
    for (const m of store.uncounted()) m.tokens = 5;
    await store.persistCounts('some-other-tokenizer');
    const reopened = await SessionStore.open(d, PATH);
    assert.equal(reopened.uncounted().length, 2);
  });
});

describe('judge verdicts and token calibration in the log', () => {
  it('replays the latest verdict per compaction and the calibration factor', async () => {
    const { d, store } = await seeded();
    const first: Verdict = {
      kind: 'scored',
      alignment: 4,
      nonContradiction: 6,
      overall: 5,
      diagnosis: 'drops the failing test name',
      accepted: false,
    };
    const second: Verdict = {
      kind: 'scored',
      alignment: 9,
      nonContradiction: 9,
      overall: 9,
      diagnosis: 'keeps the decisions',
      accepted: true,
    };
    await store.recordVerdict('c_1', 1, first);
    await store.recordVerdict('c_1', 2, second);
    await store.recordVerdict('c_2', 1, { kind: 'error', message: 'the judge request failed: 503' });
    const cal = new Calibration();
    cal.observe(1150, 1000);
    assert.equal(await store.recordCalibration(cal.toJSON()), true);
    cal.observe(1151, 1000);
    assert.equal(await store.recordCalibration(cal.toJSON()), false, 'a change under 0.5 % is not written');
    const reopened = await SessionStore.open(d, PATH);
    assert.deepEqual(reopened.snapshot.verdicts['c_1'], { attempt: 2, verdict: second, at: d.clock.now() });
    assert.equal(reopened.snapshot.verdicts['c_2']!.verdict.kind, 'error');
    assert.equal(Calibration.restore(reopened.snapshot.calibration ?? undefined).factor, 1.15);
    assert.equal(reopened.snapshot.calibration!.samples, 1);
  });

  it('starts the calibration over in a log from before the tool definitions were counted (its factor took their share)', async () => {
    const { d, storage } = await seeded();
    storage.files.set(PATH, storage.files.get(PATH)! + JSON.stringify({ type: 'calibration', factor: 2.4, samples: 6, at: 1 }) + '\n');
    const old = await SessionStore.open(d, PATH);
    assert.equal(old.snapshot.calibration, null, 'a factor learnt on messages alone is not applied to messages and tools');
    assert.equal(await old.recordCalibration({ factor: 1.1, samples: 1 }), true);
    const reopened = await SessionStore.open(d, PATH);
    assert.deepEqual(reopened.snapshot.calibration, { factor: 1.1, samples: 1 });
  });

  it('refuses a calibration that is not a positive factor, and an invalid verdict line on replay', async () => {
    const { d, storage, store } = await seeded();
    assert.equal(await store.recordCalibration({ factor: Number.NaN, samples: 1 }), false);
    storage.files.set(
      PATH,
      storage.files.get(PATH)! +
        JSON.stringify({ type: 'verdict', compactionId: 'c_1', attempt: 0, verdict: { kind: 'scored' }, at: 1 }) +
        '\n',
    );
    await assert.rejects(
      SessionStore.open(d, PATH),
      (e: unknown) => e instanceof SessionCorruptError && e.line === 4 && /attempt|verdict/.test(e.reason),
    );
  });
});

describe('session log under crashes and junk', () => {
  it('cut at any byte (a crash mid-write), the log opens with a prefix of its messages, or names line 1 when the header itself is cut', async () => {
    const { d, storage, store } = await seeded();
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"é.ts"}' } }],
    });
    await store.append({ role: 'tool', tool_call_id: 'c1', content: 'export const ü = "日本";' });
    await store.recordVerdict('c_1', 1, { kind: 'error', message: 'x' });
    const full = storage.files.get(PATH)!;
    const ids = store.snapshot.messages.map((m) => m.id);
    const headerEnd = full.indexOf('\n') + 1;
    for (let cut = 1; cut < full.length; cut++) {
      storage.files.set(PATH, full.slice(0, cut));
      for (const k of [...storage.files.keys()]) if (k.endsWith('.bak')) storage.files.delete(k);
      if (cut < headerEnd - 1) {
        await assert.rejects(SessionStore.open(d, PATH), (e: unknown) => e instanceof SessionCorruptError && e.line === 1, `cut ${cut}`);
        continue;
      }
      const opened = await SessionStore.open(d, PATH);
      const got = opened.snapshot.messages.map((m) => m.id);
      assert.deepEqual(got, ids.slice(0, got.length), `cut ${cut}`);
      assert.ok(storage.files.get(PATH)!.endsWith('\n'), `cut ${cut}: the file ends on a whole line again`);
    }
  });

  it('parsing arbitrary text never throws: it opens or names a line', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (junk) => {
        const r = parseLog(junk);
        return r.ok || (Number.isInteger(r.line) && r.line >= 1 && r.reason.length > 0);
      }),
      { numRuns: 500 },
    );
    const header = JSON.stringify({ type: 'session', v: 1, id: 's', createdAt: 1 });
    fc.assert(
      fc.property(fc.array(fc.json(), { maxLength: 8 }), (lines) => {
        const r = parseLog([header, ...lines].join('\n') + '\n');
        return r.ok || r.line >= 2;
      }),
      { numRuns: 300 },
    );
  });
});

describe('repair and a concurrent writer', () => {
  it('does not cut a last line that another process is still writing', async () => {
    const { d, storage } = await seeded();
    const partial = storage.files.get(PATH)! + '{"type":"message","message":{"role":"user","content":"hel';
    storage.files.set(PATH, partial);
    // The other writer finishes its line between our read and our repair.
    const realCopy = storage.copy.bind(storage);
    storage.copy = async (from, to) => {
      await realCopy(from, to);
      storage.files.set(PATH, partial + 'lo","id":"m_x","timestamp":1,"kind":"normal"}}\n');
    };
    await assert.rejects(SessionStore.open(d, PATH), /changed while it was being opened/);
    assert.ok(storage.files.get(PATH)!.endsWith('"kind":"normal"}}\n'), 'the finished line is kept');
  });
});
