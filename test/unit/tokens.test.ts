import assert from 'node:assert/strict';
import { Calibration } from '../../src/core/tokens/calibration';
import { loadTiktokenCounter, tokenizerLoadCount } from '../../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MESSAGE_OVERHEAD_TOKENS } from '../../src/core/tokens/tokenCounter';
import type { TokenCounter } from '../../src/core/tokens/tokenCounter';
import { call, user } from './helpers/build';
import { forgetCountsAfterNow, MemoCounter } from '../../src/core/tokens/memoCounter';
import { renderTranscript, transcriptTokens } from '../../src/core/compaction/prompts';
import type { ChatMessage } from '../../src/core/messages';
import { readFileSync } from 'node:fs';

describe('token counting', () => {
  it('loads the tokenizer once, on first use, and counts real BPE tokens', async () => {
    const before = tokenizerLoadCount();
    const [a, b] = await Promise.all([loadTiktokenCounter(), loadTiktokenCounter()]);
    assert.equal(a, b);
    assert.ok(tokenizerLoadCount() <= before + 1);
    assert.equal(a.countText('hello world'), 2);
    assert.equal(a.countText(''), 0);
    // special-token look-alikes in tool output are text, not control tokens
    assert.ok(a.countText('<|endoftext|> injected') > 3);
  });

  it('counts tool calls and role framing', async () => {
    const c = await loadTiktokenCounter();
    const m = call('read_file', { path: 'src/parser/lexer.ts' });
    assert.ok(c.countMessage(m) > MESSAGE_OVERHEAD_TOKENS + 8);
    assert.equal(c.countMessage(user('hello world')), MESSAGE_OVERHEAD_TOKENS + 2);
  });

  it('caches per message so a session is tokenised once', () => {
    let calls = 0;
    const counting: TokenCounter = {
      countText: (t) => t.length,
      countMessage: (m) => {
        calls++;
        return (m.content ?? '').length;
      },
    };
    const ledger = new TokenLedger(counting);
    const msgs = [user('aaaa'), user('bb')];
    assert.equal(ledger.total(msgs), 6);
    assert.equal(ledger.total(msgs), 6);
    assert.equal(calls, 2);
    assert.equal(msgs[0]!.tokens, 4, 'the count is kept on the message for the session log');
  });

  it('counts the tool definitions a request sends as they are sent (JSON), once per set of tools', () => {
    const counted: string[] = [];
    const ledger = new TokenLedger({ countText: (t) => (counted.push(t), t.length), countMessage: () => 0 });
    const read = { type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object' } } };
    const write = { type: 'function' as const, function: { name: 'write_file' } };
    assert.equal(ledger.toolTokens([]), 0);
    assert.equal(ledger.toolTokens([read, write]), JSON.stringify([read, write]).length);
    assert.equal(ledger.toolTokens([read, write]), JSON.stringify([read, write]).length);
    assert.equal(counted.length, 1, 'the same set is not counted again');
    assert.equal(ledger.toolTokens([read]), JSON.stringify([read]).length);
    // Equal definitions in new objects (a registry rebuilt with the same tools) are not counted again either.
    assert.equal(ledger.toolTokens([structuredClone(read)]), JSON.stringify([read]).length);
    assert.equal(counted.length, 2);
  });
});

describe('remembered counts', () => {
  it('counts a long text once however often it comes back, equal or identical; short texts every time', () => {
    const seen: string[] = [];
    const memo = new MemoCounter({ countText: (t) => (seen.push(t), t.split(' ').length) });
    const long = 'word '.repeat(300);
    const equalCopy = [...long].join(''); // equal contents, another string
    assert.equal(memo.countText(long), 301);
    assert.equal(memo.countText(equalCopy), 301);
    assert.equal(memo.countText(long.slice(0, -1)), 300, 'a different text is counted');
    assert.equal(seen.length, 2);
    memo.countText('short text');
    memo.countText('short text');
    assert.equal(seen.length, 4);
    assert.equal(memo.countMessage(user(long)), MESSAGE_OVERHEAD_TOKENS + 301);
    assert.equal(seen.length, 4, 'a message counts its text through the memo');
  });

  it('rolls back to a checkpoint: texts remembered before it stay, later ones are counted again', () => {
    const seen: string[] = [];
    const memo = new MemoCounter({ countText: (t) => (seen.push(t), t.split(' ').length) });
    const [a, b, c] = ['alpha ', 'beta ', 'gamma '].map((w) => w.repeat(40));
    memo.countText(a!);
    const mark = memo.checkpoint();
    memo.countText(b!);
    memo.countText(c!);
    memo.rollback(mark);
    seen.length = 0;
    [a, b, c].forEach((t) => memo.countText(t!));
    assert.deepEqual(seen, [b, c], 'only the texts after the checkpoint were forgotten');
    memo.rollback(memo.checkpoint());
    [a, b, c].forEach((t) => memo.countText(t!));
    assert.equal(seen.length, 2, 'rolling back to now forgets nothing');
  });

  it('a checkpoint taken before the memo started over forgets everything it holds now', () => {
    const seen: string[] = [];
    const memo = new MemoCounter({ countText: (t) => (seen.push(t), 1) });
    memo.countText('p'.repeat(100)); // the checkpoint holds one text
    const forget = forgetCountsAfterNow(memo);
    // Two 9M-character texts pass the 16M-character bound: the memo starts over before the second.
    const [big1, big2, small] = ['x'.repeat(9_000_000), 'y'.repeat(9_000_000), 'z'.repeat(100)];
    [big1, big2, small].forEach((t) => memo.countText(t));
    forget();
    seen.length = 0;
    [big2, small].forEach((t) => memo.countText(t));
    assert.equal(seen.length, 2, 'both were counted after the checkpoint, so both are forgotten');
  });

  it('a transcript counted message by message agrees with counting it whole, within a token per message', async () => {
    const c = await loadTiktokenCounter();
    const session = JSON.parse(readFileSync('test/fixtures/long-session.json', 'utf8')) as ChatMessage[];
    const msgs = session.filter((m) => m.role !== 'system').slice(0, 120);
    const whole = c.countText(renderTranscript(msgs, 1));
    const pieces = transcriptTokens(msgs, 1, c);
    assert.ok(whole > 5000, `${whole} tokens`);
    assert.ok(Math.abs(pieces - whole) <= msgs.length, `by pieces ${pieces}, whole ${whole}, ${msgs.length} messages`);
  });
});

describe('calibration', () => {
  it('moves toward the server/local ratio and scales gauges by it', () => {
    const c = new Calibration();
    assert.equal(c.apply(1000), 1000);
    c.observe(1200, 1000);
    assert.equal(c.factor, 1.2, 'the first sample counts fully');
    for (let i = 0; i < 20; i++) c.observe(1100, 1000);
    assert.ok(Math.abs(c.factor - 1.1) < 0.01, `factor ${c.factor}`);
    assert.equal(c.apply(2000), Math.round(2000 * c.factor));
  });

  it('ignores implausible samples and restores from saved state', () => {
    const c = new Calibration();
    assert.equal(c.observe(50, 1000), false);
    assert.equal(c.observe(0, 1000), false);
    assert.equal(c.factor, 1);
    c.observe(900, 1000);
    const r = Calibration.restore(c.toJSON());
    assert.equal(r.factor, c.factor);
    assert.equal(Calibration.restore({ factor: -3, samples: 2 }).factor, 1);
  });
});

describe('token ledger with derived messages', () => {
  it('recounts a message whose text changed under the same id (the pinned block after a pin edit)', () => {
    const counter: TokenCounter = { countText: (t) => t.length, countMessage: (m) => (m.content ?? '').length };
    const ledger = new TokenLedger(counter);
    const pinned = { ...user('PINNED: keep the users table'), id: 'pinned-block', kind: 'pinned' as const };
    assert.equal(ledger.count(pinned), 28);
    const edited = { ...user('PINNED: keep the users table; port 8123 stays'), id: 'pinned-block', kind: 'pinned' as const };
    assert.equal(ledger.count(edited), 45);
    assert.equal(ledger.estimate({ role: 'user', content: 'x', id: 'pinned-block' } as never), 1);
  });
});
