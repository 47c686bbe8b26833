import assert from 'node:assert/strict';
import { summarizeLog } from '../../src/host/sessionLibrary';

describe('session list: title, size and last use', () => {
  it('reads the last use from the latest message or event time, and the size in bytes', () => {
    const lines = [
      JSON.stringify({ type: 'session', v: 1, id: 's', createdAt: 1_700_000_000_000 }),
      JSON.stringify({
        type: 'message',
        message: { role: 'user', content: 'Fix the flaky test — ünïcode', id: 'm1', timestamp: 1_700_000_100_000, kind: 'normal' },
      }),
      JSON.stringify({ type: 'focus', focus: 'x', at: 1_700_000_300_000 }),
      JSON.stringify({
        type: 'message',
        message: { role: 'assistant', content: 'ok', id: 'm2', timestamp: 1_700_000_200_000, kind: 'normal' },
      }),
    ];
    const text = `${lines.join('\n')}\n`;
    const e = summarizeLog('s', '/p/s.jsonl', text);
    assert.equal(e.title, 'Fix the flaky test — ünïcode');
    assert.equal(e.messageCount, 2);
    assert.equal(e.lastUsedAt, 1_700_000_300_000);
    assert.equal(e.bytes, Buffer.byteLength(text));
  });

  it('a session with nothing but its header was last used when it was created', () => {
    const e = summarizeLog('s', 'p', `${JSON.stringify({ type: 'session', v: 1, id: 's', createdAt: 1_700_000_000_000 })}\n`);
    assert.equal(e.lastUsedAt, 1_700_000_000_000);
  });
});
