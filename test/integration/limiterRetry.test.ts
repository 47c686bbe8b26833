import assert from 'node:assert/strict';
import { VllmClient } from '../../src/llm/client';
import { AbortedError, RateLimitedError, ServerError, BadRequestError } from '../../src/llm/errors';
import { limiterFor, Semaphore } from '../../src/llm/limiter';
import { backoffDelay, DEFAULT_RETRY_POLICY, withRetry, type RetryPolicy } from '../../src/llm/retry';
import { startSimulator } from '../sim/server';

describe('retry policy', () => {
  const policy: RetryPolicy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.5, maxRetryAfterMs: 5000 };

  it('backoff doubles, is capped, and jitter spans [d(1-j), d]', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 1)),
      [100, 200, 400, 800, 1000],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => backoffDelay(n, policy, () => 0)),
      [50, 100, 200],
    );
    assert.equal(
      backoffDelay(3, { ...policy, jitter: 1 }, () => 0),
      0,
    );
    assert.equal(
      backoffDelay(3, { ...policy, jitter: 0 }, () => 0.3),
      400,
    );
  });

  it('retries only retryable errors, honours Retry-After, and stops at maxRetries', async () => {
    const slept: number[] = [];
    const sleep = async (ms: number) => void slept.push(ms);
    let calls = 0;
    const ok = await withRetry(
      async () => {
        calls++;
        if (calls === 1) throw new RateLimitedError('slow down', 1234);
        if (calls === 2) throw new ServerError('boom', undefined);
        return 'done';
      },
      { policy, sleep, random: () => 1 },
    );
    assert.equal(ok, 'done');
    assert.deepEqual(slept, [1234, 200]);

    calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw new BadRequestError('no');
        },
        { policy, sleep },
      ),
      (e: BadRequestError) => e.attempts === 1,
    );
    assert.equal(calls, 1);

    await assert.rejects(
      withRetry(
        async () => {
          throw new ServerError('down', undefined);
        },
        { policy: { ...policy, maxRetries: 2 }, sleep },
      ),
      (e: ServerError) => e.attempts === 3,
    );
  });

  it('an abort during the backoff sleep ends the loop with AbortedError', async () => {
    const ctl = new AbortController();
    const p = withRetry(
      async () => {
        throw new ServerError('down', undefined);
      },
      { policy: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10_000 }, signal: ctl.signal },
    );
    setTimeout(() => ctl.abort(), 20);
    await assert.rejects(p, AbortedError);
  });
});

describe('concurrency limiter', () => {
  it('caps holders at max, admits FIFO, and records the highest number in flight', async () => {
    const s = new Semaphore(2);
    const order: number[] = [];
    const gates: Array<() => void> = [];
    const tasks = [0, 1, 2, 3, 4].map((i) =>
      s.run(async () => {
        order.push(i);
        await new Promise<void>((r) => gates.push(r));
      }),
    );
    await new Promise((r) => setImmediate(r));
    assert.equal(s.inFlight, 2);
    assert.equal(s.waiting, 3);
    while (gates.length > 0 || s.inFlight > 0) {
      gates.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(tasks);
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.equal(s.maxInFlight, 2);
    assert.equal(s.inFlight, 0);
  });

  it('an aborted waiter leaves the queue; setMax admits more', async () => {
    const s = new Semaphore(1);
    const release = await s.acquire();
    const ctl = new AbortController();
    const waiting = s.acquire(ctl.signal);
    ctl.abort();
    await assert.rejects(waiting, AbortedError);
    assert.equal(s.waiting, 0);
    const w2 = s.acquire();
    s.setMax(2);
    (await w2)();
    release();
    assert.equal(s.inFlight, 0);
    assert.throws(() => new Semaphore(0), RangeError);
  });

  it('limiterFor shares one limiter per endpoint (URL-normalised)', () => {
    const a = limiterFor('http://127.0.0.1:9/v1/', 3);
    assert.equal(limiterFor('http://127.0.0.1:9/v1'), a);
    assert.equal(limiterFor('http://127.0.0.1:9'), a, 'bare origin means /v1');
    assert.notEqual(limiterFor('http://127.0.0.1:10/v1'), a);
    limiterFor('http://127.0.0.1:9/v1', 5);
    assert.equal(a.max, 5);
  });

  it('client chats through a shared limiter: the server never sees more than the limit in flight', async () => {
    const sim = await startSimulator({ profile: 'unit', timeScale: 0.3, maxNumSeqs: 16 }); // 3 ms per step
    try {
      const limiter = new Semaphore(3);
      const clients = [0, 1].map(() => new VllmClient({ baseURL: sim.url, model: sim.model, limiter }));
      await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          clients[i % 2].chat({ messages: [{ role: 'user', content: `block ${i}: summarise the retry loop in detail please` }] }),
        ),
      );
      assert.equal(limiter.maxInFlight, 3);
      assert.equal(sim.stats.maxRunning, 3, 'observed on the server too');
      assert.equal(sim.stats.requests.filter((r) => r.status === 'done').length, 9);
    } finally {
      await sim.close();
    }
  });
});
