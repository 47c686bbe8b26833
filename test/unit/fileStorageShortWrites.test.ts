import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeFileStorage, type OpenFile } from '../../src/node/fileStorage';

/**
 * Opens real files but hands out handles whose buffer writes go through
 * `limit`: it gets the call's number (from 0) and the bytes asked for, and
 * returns how many to really write (0 = write nothing, as a full disk can).
 */
function shortWriter(limit: (call: number, asked: number) => number): { open: OpenFile; calls: () => number } {
  let calls = 0;
  const open: OpenFile = async (path, flags) => {
    const fh = await fs.open(path, flags);
    const write = async (buffer: Buffer, offset = 0, length = buffer.length - offset) => {
      const n = Math.min(length, limit(calls++, length));
      if (n === 0) return { bytesWritten: 0, buffer };
      return fh.write(buffer, offset, n);
    };
    return new Proxy(fh, {
      get: (target, prop) => {
        if (prop === 'write') return write;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  return { open, calls: () => calls };
}

const line = (i: number) => `{"type":"message","n":${i},"text":"${'é✓'.repeat(20)}${'x'.repeat(i)}"}\n`;

describe('NodeFileStorage: short writes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-shortwrite-'));
  });

  it('append, writeAtomic and create write the whole text when each write call takes at most 7 bytes', async () => {
    const w = shortWriter(() => 7);
    const storage = new NodeFileStorage(undefined, w.open);
    const text = line(1) + line(2);
    const log = join(dir, 'a.jsonl');
    await storage.create(log, text);
    assert.equal(readFileSync(log, 'utf8'), text);
    await storage.append(log, line(3));
    assert.equal(readFileSync(log, 'utf8'), text + line(3), 'the next append lands after a whole line');
    await storage.writeAtomic(join(dir, 'b.jsonl'), text + line(4));
    assert.equal(readFileSync(join(dir, 'b.jsonl'), 'utf8'), text + line(4));
    assert.ok(w.calls() > 30, `the writes were really cut short (${w.calls()} calls)`);
    assert.deepEqual(readdirSync(dir).sort(), ['a.jsonl', 'b.jsonl'], 'no temporary files left');
  });

  it('append that stops writing leaves the file at its previous size and throws', async () => {
    const log = join(dir, 'a.jsonl');
    writeFileSync(log, line(1));
    // Two short writes, then the disk is full.
    const storage = new NodeFileStorage(undefined, shortWriter((call) => (call < 2 ? 5 : 0)).open);
    await assert.rejects(storage.append(log, line(2)), /a\.jsonl stopped after 10 of \d+ bytes/);
    assert.equal(readFileSync(log, 'utf8'), line(1), 'the partial line was cut off again');
  });

  it('writeAtomic that stops writing keeps the old file and leaves no temporary file', async () => {
    const log = join(dir, 'a.jsonl');
    writeFileSync(log, line(1));
    const storage = new NodeFileStorage(undefined, shortWriter((call) => (call < 3 ? 4 : 0)).open);
    await assert.rejects(storage.writeAtomic(log, line(5) + line(6)), /a\.jsonl\.tmp-.* stopped after 12 of \d+ bytes/);
    assert.equal(readFileSync(log, 'utf8'), line(1), 'a truncated temp file was not renamed over the log');
    assert.deepEqual(readdirSync(dir), ['a.jsonl']);
  });

  it('create that stops writing creates nothing', async () => {
    const storage = new NodeFileStorage(undefined, shortWriter((call) => (call < 1 ? 3 : 0)).open);
    await assert.rejects(storage.create(join(dir, 'new.jsonl'), line(1)), /new\.jsonl\..*\.creating stopped after 3 of \d+ bytes/);
    assert.deepEqual(readdirSync(dir), []);
  });
});
