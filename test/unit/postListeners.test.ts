import assert from 'node:assert/strict';
import { PostListeners } from '../../src/host/postListeners';
import type { HostToWebview } from '../../src/protocol/messages';

describe('post listeners', () => {
  const msg: HostToWebview = { type: 'assistant-delta', text: 'hi' };

  it('every listener gets what is posted; only those that watch make the view watched, until they leave', () => {
    const l = new PostListeners();
    const got: string[] = [];
    const offPassive = l.add(() => got.push('passive'), false);
    assert.equal(l.watched, false, 'a listener that does not watch');
    const offA = l.add(() => got.push('a'), true);
    const offB = l.add(() => got.push('b'), true);
    l.emit(msg);
    assert.deepEqual(got, ['passive', 'a', 'b']);
    assert.equal(l.watched, true);
    offA();
    offA();
    assert.equal(l.watched, true, 'unsubscribing twice does not count twice: b still watches');
    offB();
    assert.equal(l.watched, false);
    offPassive();
    got.length = 0;
    l.emit(msg);
    assert.deepEqual(got, []);
  });

  it('refuses the same listener twice (its watch would be counted twice)', () => {
    const l = new PostListeners();
    const f = () => undefined;
    l.add(f, true);
    assert.throws(() => l.add(f, false), /already subscribed/);
    assert.equal(l.watched, true);
  });
});
