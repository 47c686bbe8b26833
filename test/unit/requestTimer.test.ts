import assert from 'node:assert/strict';
import { RequestTimer, type TimeoutKind } from '../../src/llm/requestTimer';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A timer whose clocks are real but short; `fired` collects what ran out. */
function timer(deadlineMs: number) {
  const fired: TimeoutKind[] = [];
  const t = new RequestTimer(performance.now() + deadlineMs, deadlineMs, (k) => fired.push(k));
  return { t, fired };
}

describe('RequestTimer: the deadline and the idle clock', () => {
  it('the idle clock waits for the first event: before it only the deadline runs, after it silence is a stall', async () => {
    // Margins of 100 ms and more, so that a busy machine's late timers do not decide the outcome.
    const { t, fired } = timer(5000);
    t.idleAfterStart(300);
    await sleep(600);
    assert.deepEqual(fired, [], 'no idle timeout before the reply began (the queue, the prefill)');
    t.started();
    await sleep(150);
    t.progress();
    await sleep(200);
    assert.deepEqual(fired, [], 'progress pushed the idle clock back');
    await sleep(400);
    assert.deepEqual(fired, ['idle']);
    assert.match(t.error('http://x/v1').message, /sent no tokens for 300 ms/);
    t.stop();
  });

  it('a streamed reply that never began ends at the deadline, and the message says the server had not started it', async () => {
    const { t, fired } = timer(100);
    t.idleAfterStart(30);
    await sleep(300);
    assert.deepEqual(fired, ['deadline']);
    assert.match(t.error('http://x/v1').message, /did not finish within 100 ms; it was stopped\. The server had not started its reply/);
    // Once begun, the deadline's message does not say so; nor for a reply that is not streamed.
    const begun = timer(100);
    begun.t.idleAfterStart(1000);
    begun.t.started();
    await sleep(300);
    assert.deepEqual(begun.fired, ['deadline']);
    assert.doesNotMatch(begun.t.error('http://x/v1').message, /had not started/);
    const whole = timer(40);
    await sleep(200);
    assert.doesNotMatch(whole.t.error('http://x/v1').message, /had not started/);
  });

  it('an event after stop() sets no timer', async () => {
    const { t, fired } = timer(2000);
    t.idleAfterStart(30);
    t.stop();
    t.started();
    await sleep(200);
    assert.deepEqual(fired, []);
  });
});
