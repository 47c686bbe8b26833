/**
 * A summary made while the agent was idle is held, to be judged against the user's next message. A user who comes
 * back and types /compact, or edits one of its blocks, reviews it at once instead of waiting for another; and the
 * idle trigger leaves alone a user who steers a compaction of their own.
 */
import assert from 'node:assert/strict';
import { RELEASED } from '../../src/core/agent/compactionRunner';
import { defaultSettings } from '../../src/core/config/settings';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { SessionController } from '../../src/host/sessionController';
import type { CompactionView, HostToWebview } from '../../src/protocol/messages';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';
import type { Clock } from '../../src/core/session/storage';

const IDLE_MS = 60_000;

/** More than half of the 32K window, so that the idle trigger finds the session worth compacting. */
async function setup(clock: Clock & { advance(ms: number): void } = fixedClock()) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock }, '/s/idle.jsonl');
  await store.append({ role: 'system', content: 'You are a test agent.' });
  for (let i = 0; i < 50; i++) {
    await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
    await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
  }
  const posted: HostToWebview[] = [];
  const compactor = new FakeModel();
  const settings = { ...defaultSettings(), idleMinutes: IDLE_MS / 60_000, judge: { enabled: true, threshold: 7 }, blockTokens: 2048 };
  const c = new SessionController({
    store,
    ledger: new TokenLedger(new CharEstimateCounter()),
    env: { settings, contextWindow: 32_768, agent: new FakeModel(), compactor, compactorLimiter: unlimited, judge: compactor },
    ...controllerDefaults(store, { id: 'idle', title: 'Idle' }),
    clock,
    ids: counterIds(),
    post: (m) => posted.push(m),
  });
  const views = () =>
    posted.filter((m): m is Extract<HostToWebview, { type: 'compaction' }> => m.type === 'compaction').map((m) => m.compaction);
  const view = (): CompactionView | null => views().pop() ?? null;
  const notices = () => posted.filter((m): m is Extract<HostToWebview, { type: 'notice' }> => m.type === 'notice').map((m) => m.text);
  /** The user has been away for the idle time: the trigger fires, and its summary is held for the next message. */
  const heldWhileIdle = async (): Promise<CompactionView> => {
    clock.advance(IDLE_MS + 1000);
    assert.equal(c.idleTick(), true, 'the idle trigger fired');
    for (let i = 0; i < 200 && view()?.state !== 'held'; i++) await new Promise((r) => setTimeout(r, 5));
    const v = view()!;
    assert.equal(v.state, 'held', 'held: no step to judge it against yet');
    return v;
  };
  return { c, store, compactor, clock, view, notices, heldWhileIdle };
}

describe('host: the idle trigger measures idle time on the monotonic clock', () => {
  it('does not fire when only the wall clock stepped forward (this VM steps it by minutes), and fires after the time itself', async () => {
    let wall = 1_700_000_000_000;
    let mono = 5_000;
    const clock = {
      now: () => wall,
      monotonic: () => mono,
      advance: (ms: number) => {
        wall += ms;
        mono += ms;
      },
    };
    const { c } = await setup(clock);
    try {
      wall += IDLE_MS + 60_000;
      mono += 1_000;
      assert.equal(c.idleTick(), false, 'a step of the wall clock is not idle time');
      mono += IDLE_MS;
      assert.equal(c.idleTick(), true, 'a minute of idle time is');
    } finally {
      await c.dispose();
    }
  });
});

describe("host: a summary held while idle, and the user's own compaction", () => {
  let ctl: SessionController | undefined;
  afterEach(async () => {
    await ctl?.dispose();
    ctl = undefined;
  });

  it('/compact takes the held summary to review at once: no request, not judged, adopted by hand', async () => {
    const { c, store, compactor, view, notices, heldWhileIdle } = await setup();
    ctl = c;
    const held = await heldWhileIdle();
    const requests = compactor.requests.length;
    await c.handle({ type: 'send', text: '/compact' });
    assert.equal(compactor.requests.length, requests, 'nothing summarised again');
    assert.equal(view()!.id, held.id);
    assert.equal(view()!.note, RELEASED);
    assert.match(notices().pop()!, /^The summary made while the agent was idle is ready: adopt it/);
    assert.doesNotMatch(notices().join('\n'), /already running/);
    // The user's now: a message does not send it to the judge, nor adopt it.
    await c.handle({ type: 'send', text: 'Which module did we start with?' });
    assert.equal(compactor.requests.length, requests, 'no judge call');
    assert.equal(store.snapshot.compactions.length, 0);
    assert.equal(view()!.id, held.id);
    await c.handle({ type: 'compaction-adopt', compactionId: held.id });
    assert.equal(store.snapshot.compactions.length, 1);
    assert.equal(view()!.state, 'adopted');
  });

  it('once a message has come the judge decides: /compact and edits are refused meanwhile and start nothing', async () => {
    const { c, compactor, view, notices, heldWhileIdle } = await setup();
    ctl = c;
    const held = await heldWhileIdle();
    compactor.hold();
    const turn = c.handle({ type: 'send', text: 'Which module did we start with?' });
    for (let i = 0; i < 200 && view()?.state !== 'judging'; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(view()!.state, 'judging', 'the panel says the judge checks it');
    const requests = compactor.requests.length;
    await c.handle({ type: 'send', text: '/compact' });
    assert.match(notices().pop()!, /^The judge is checking the summary made while the agent was idle/);
    await c.handle({ type: 'block-edit', compactionId: held.id, block: 0, text: 'DECISIONS:\n- mine' });
    assert.match(notices().pop()!, /^The judge is checking the summary made while the agent was idle/);
    assert.equal(view()!.id, held.id, 'no second compaction');
    assert.equal(compactor.requests.length, requests);
    compactor.release();
    await turn;
    assert.equal(view()!.id, held.id);
    assert.ok(
      view()!.blocks.every((b) => b.status === 'done'),
      'the edit was not applied behind the judge',
    );
  });

  it('two /compact at once hand the held summary over once, and both say so', async () => {
    const { c, compactor, view, notices, heldWhileIdle } = await setup();
    ctl = c;
    const held = await heldWhileIdle();
    const requests = compactor.requests.length;
    await Promise.all([c.handle({ type: 'send', text: '/compact' }), c.handle({ type: 'send', text: '/compact' })]);
    assert.equal(compactor.requests.length, requests);
    assert.equal(view()!.id, held.id);
    assert.deepEqual(
      notices()
        .slice(-2)
        .map((n) => n.startsWith('The summary made while the agent was idle is ready')),
      [true, true],
    );
  });

  it('/compact with another focus than the held summary had redoes it as a preview with that focus', async () => {
    const { c, store, compactor, view, heldWhileIdle } = await setup();
    ctl = c;
    const held = await heldWhileIdle();
    const requests = compactor.requests.length;
    await c.handle({ type: 'send', text: '/compact "keep the answers"' });
    const v = view()!;
    assert.notEqual(v.id, held.id, 'a new compaction');
    assert.equal(v.state, 'ready');
    assert.equal(v.focus, 'keep the answers');
    assert.ok(compactor.requests.length > requests);
    assert.ok(compactor.requests.slice(requests).some((r) => /keep the answers/.test(r.messages.at(-1)!.content ?? '')));
    await c.handle({ type: 'compaction-adopt', compactionId: v.id });
    assert.equal(store.snapshot.compactions.length, 1);
  });

  it("editing a block of the held summary makes it the user's: the edit holds and it is adopted as edited", async () => {
    const { c, store, view, heldWhileIdle } = await setup();
    ctl = c;
    const held = await heldWhileIdle();
    await c.handle({ type: 'block-edit', compactionId: held.id, block: 0, text: 'DECISIONS:\n- kept by hand' });
    assert.equal(view()!.note, RELEASED);
    await c.handle({ type: 'compaction-adopt', compactionId: held.id });
    assert.match(
      store
        .active()
        .messages.map((m) => m.content)
        .join('\n'),
      /kept by hand/,
    );
  });

  it('the idle trigger leaves a preview of the user alone, and fires again an idle time after it is cancelled', async () => {
    const { c, clock, view } = await setup();
    ctl = c;
    await c.handle({ type: 'send', text: '/compact' });
    const preview = view()!;
    assert.equal(preview.state, 'ready');
    clock.advance(IDLE_MS + 1000);
    assert.equal(c.idleTick(), false, 'not while the user reviews their preview');
    await c.handle({ type: 'compaction-cancel', compactionId: preview.id });
    assert.equal(c.idleTick(), false, 'turning one down is activity: the idle time starts again');
    clock.advance(IDLE_MS + 1000);
    assert.equal(c.idleTick(), true);
  });
});
