import assert from 'node:assert/strict';
import { MemoryLog } from '../../src/host/log';
import { LoggedModel } from '../../src/host/modelPorts';
import { FakeModel } from './helpers/fakeModel';

describe('LoggedModel: what a model call writes to the log', () => {
  const req = { messages: [{ role: 'user' as const, content: 'secret prompt text' }], maxTokens: 64 };

  it("logs the agent's and the judge's answers at info, a compaction worker's at debug", async () => {
    const log = new MemoryLog();
    const seq = { n: 0 };
    for (const role of ['agent', 'judge', 'compactor'] as const) await new LoggedModel(new FakeModel(), role, log, seq, []).chat(req);
    const answers = log.lines.filter((l) => l.includes('← '));
    assert.deepEqual(
      answers.map((l) => l.split(' ').slice(0, 3).join(' ')),
      ['info ← agent#1', 'info ← judge#2', 'debug ← compactor#3'],
    );
    assert.match(answers[2]!, /prompt=1001 cached=900 completion=\d+ finish=stop/);
    assert.ok(log.lines.every((l) => !l.includes('secret prompt text')));
  });

  it("logs a worker's failure as a warning, with the key redacted", async () => {
    const log = new MemoryLog();
    const inner = new FakeModel();
    inner.failNext.push('401 Unauthorized: bad key sk-abcdefgh12345678');
    await assert.rejects(new LoggedModel(inner, 'compactor', log, { n: 0 }, []).chat(req));
    const warn = log.lines.find((l) => l.startsWith('warn ✗ compactor#1'));
    assert.ok(warn, log.lines.join('\n'));
    assert.ok(!warn.includes('sk-abcdefgh12345678') && warn.includes('[redacted]'));
  });
});
