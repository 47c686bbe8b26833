import assert from 'node:assert/strict';
import { HANDLED_TYPES } from '../../src/host/webviewDispatch';
import { isWebviewToHost, WEBVIEW_TO_HOST_TYPES } from '../../src/protocol/validate';

describe('protocol: one list of webview message types', () => {
  it('the validator accepts exactly the types the host dispatch table handles', () => {
    assert.deepEqual([...WEBVIEW_TO_HOST_TYPES].sort(), [...HANDLED_TYPES].sort());
    assert.equal(WEBVIEW_TO_HOST_TYPES.length, 21);
  });

  it('checks the shape of each message and refuses unknown types', () => {
    assert.equal(isWebviewToHost({ type: 'ready' }), true);
    assert.equal(isWebviewToHost({ type: 'send', text: 'hi' }), true);
    assert.equal(isWebviewToHost({ type: 'send', text: 3 }), false);
    assert.equal(isWebviewToHost({ type: 'compact', focus: null, tailStartIndex: 4 }), true);
    assert.equal(isWebviewToHost({ type: 'compact', focus: null, tailStartIndex: 4.5 }), false);
    assert.equal(isWebviewToHost({ type: 'set-strategy', strategy: 'recent-turns' }), true);
    assert.equal(isWebviewToHost({ type: 'set-strategy', strategy: 'newest' }), false);
    assert.equal(isWebviewToHost({ type: 'pin', text: 'x', kind: 'note', messageId: null }), true);
    assert.equal(isWebviewToHost({ type: 'pin', text: 'x', kind: 'wish', messageId: null }), false);
    assert.equal(isWebviewToHost({ type: 'toString' }), false);
    assert.equal(isWebviewToHost({ type: 'brand-new' }), false);
    assert.equal(isWebviewToHost(null), false);
  });
});
