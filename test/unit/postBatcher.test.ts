import assert from 'node:assert/strict';
import { PostBatcher } from '../../src/host/postBatcher';
import type { HostToWebview, HostToWebviewPost } from '../../src/protocol/messages';

const notice = (text: string): HostToWebview => ({ type: 'notice', level: 'info', text });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('PostBatcher: one webview message per turn of the event loop', () => {
  it("sends one turn's messages together, in order, and a lone message as it is", async () => {
    const sent: HostToWebviewPost[] = [];
    const b = new PostBatcher((p) => sent.push(p));
    b.post(notice('a'));
    b.post({ type: 'agent-state', running: true });
    b.post(notice('b'));
    assert.deepEqual(sent, [], 'nothing goes before the turn ends');
    await turn();
    assert.deepEqual(sent, [{ type: 'batch', messages: [notice('a'), { type: 'agent-state', running: true }, notice('b')] }]);
    b.post(notice('c'));
    await turn();
    assert.deepEqual(sent.slice(1), [notice('c')]);
    await turn();
    assert.equal(sent.length, 2, 'an empty turn sends nothing');
  });

  it('what a scheduled send brings in goes in the next turn, after what was queued first', async () => {
    const sent: HostToWebviewPost[] = [];
    const b = new PostBatcher((p) => sent.push(p));
    b.post(notice('first'));
    setImmediate(() => b.post(notice('later')));
    await turn();
    await turn();
    assert.deepEqual(sent, [notice('first'), notice('later')]);
  });

  it('flush sends at once and leaves the scheduled turn nothing to send', async () => {
    const sent: HostToWebviewPost[] = [];
    const runs: (() => void)[] = [];
    const b = new PostBatcher(
      (p) => sent.push(p),
      (run) => runs.push(run),
    );
    b.post(notice('x'));
    b.post(notice('y'));
    assert.equal(runs.length, 1, 'one turn scheduled for the burst');
    b.flush();
    assert.deepEqual(sent, [{ type: 'batch', messages: [notice('x'), notice('y')] }]);
    runs[0]!();
    assert.equal(sent.length, 1);
    b.post(notice('z'));
    assert.equal(runs.length, 2, 'a new burst schedules again');
  });
});
