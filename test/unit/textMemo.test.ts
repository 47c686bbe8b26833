import assert from 'node:assert/strict';
import { TextMemo } from '../../src/core/textMemo';

describe('text memo', () => {
  it('computes a value once per key, and every map starts over when the keys would pass the bound', () => {
    const memo = new TextMemo(10);
    const a = memo.map<number>();
    const b = memo.map<number>();
    let calls = 0;
    const len = (k: string) => (calls++, k.length);
    assert.equal(memo.get(a, 'four', len), 4);
    assert.equal(memo.get(a, 'four', len), 4);
    assert.equal(calls, 1);
    memo.get(b, 'five!', len); // 9 characters held
    assert.deepEqual([a.size, b.size], [1, 1]);
    memo.get(b, 'xy', len); // 11 would pass 10: both maps start over, then hold the new key
    assert.deepEqual([a.size, b.size], [0, 1]);
    memo.get(a, 'four', len);
    assert.equal(calls, 4, 'the forgotten key is computed again');
  });
});
