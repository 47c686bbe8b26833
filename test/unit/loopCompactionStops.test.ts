import assert from 'node:assert/strict';
import { AgentLoop } from '../../src/core/agent/agentLoop';
import type { AgentEvent } from '../../src/core/agent/events';
import { planSessionCompaction } from '../../src/core/agent/compactionRunner';
import { adoptPlanned } from '../../src/core/agent/planBase';
import { autoApprove, ToolRegistry } from '../../src/core/agent/tools';
import { defaultSettings } from '../../src/core/config/settings';
import { unlimited, type ModelPort } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { agentSettingsFrom } from '../../src/host/agentSettings';
import { SessionController } from '../../src/host/sessionController';
import type { HostToWebview } from '../../src/protocol/messages';
import { history } from './helpers/backgroundDeps';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { waitsOf } from './helpers/waitLine';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(done(), 'timed out waiting');
};

async function longSession(): Promise<SessionStore> {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/p.jsonl');
  await store.append({ role: 'system', content: 'You are a test agent.' });
  for (let i = 0; i < 50; i++) {
    await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
    await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
  }
  return store;
}

/**
 * The agent loop on `store` with a fake agent and compactor (the judge is the compactor), no tools, a window of
 * `window`; `events` gets what it emits.
 */
function loopOn(store: SessionStore, ledger: TokenLedger, agent: ModelPort, compactor: FakeModel, window: number, judge = false) {
  const settings = agentSettingsFrom({ ...defaultSettings(), judge: { enabled: judge, threshold: 7 }, blockTokens: 256 }, window);
  const ids = counterIds();
  const deps = { store, ledger, model: agent, compactor, compactorLimiter: unlimited, judge: compactor, clock: fixedClock() };
  const loop = new AgentLoop(
    { ...deps, tools: new ToolRegistry([]), approvals: autoApprove, ids: { next: (p) => `L${ids.next(p)}` } },
    settings,
  );
  const events: AgentEvent[] = [];
  loop.on((e) => events.push(e));
  return { loop, settings, events };
}

describe('compactions the agent loop runs on its own: stopping them, and giving way to the user', () => {
  it("the budget trigger starts no compaction beside the user's own preview; the preview is adopted as it was", async () => {
    const store = await longSession();
    const ledger = new TokenLedger(new CharEstimateCounter());
    // Past hi of the prompt's room once the next message is in.
    const window = Math.ceil((ledger.total(store.active().messages) + 4096) / 0.8);
    const posted: HostToWebview[] = [];
    const compactor = new FakeModel();
    const settings = { ...defaultSettings(), judge: { enabled: true, threshold: 7 }, blockTokens: 2048 };
    const judge = new FakeModel(() => '{"alignment": 9, "non_contradiction": 9, "diagnosis": "ok"}');
    const c = new SessionController({
      store,
      ledger,
      env: { settings, contextWindow: window, agent: new FakeModel(() => 'Sure.'), compactor, compactorLimiter: unlimited, judge },
      ...controllerDefaults(store, { id: 'p', title: 'P' }),
      clock: fixedClock(),
      ids: counterIds(),
      post: (m) => posted.push(m),
    });
    const views = () => posted.flatMap((m) => (m.type === 'compaction' && m.compaction ? [m.compaction] : []));
    await c.handle({ type: 'send', text: '/compact "keep the lorem"' });
    const preview = views().at(-1)!;
    assert.equal(preview.state, 'ready');
    const requests = compactor.requests.length;
    await c.handle({ type: 'send', text: 'One more question' });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(compactor.requests.length, requests, 'no second compaction of the same context');
    assert.equal(views().at(-1)!.id, preview.id, 'the view still shows the preview');
    await c.handle({ type: 'compaction-adopt', compactionId: preview.id });
    assert.deepEqual(
      store.snapshot.compactions.map((x) => x.id),
      [preview.id],
      "the user's preview is what was adopted",
    );
    await c.dispose();
  });

  it('the synchronous compaction a twice-rejected summary falls back to stops on Cancel while the agent is idle', async () => {
    const clock = fixedClock();
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock }, '/s/p.jsonl');
    await store.append({ role: 'system', content: 'You are a test agent.' });
    for (let i = 0; i < 50; i++) {
      await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
      await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
    }
    const ledger = new TokenLedger(new CharEstimateCounter());
    const window = Math.ceil((ledger.total(store.active().messages) + 4096) / 0.8);
    const posted: HostToWebview[] = [];
    const compactor = new FakeModel();
    let verdicts = 0;
    const judge = new FakeModel(() => {
      // The second rejection sends the loop to its synchronous fallback: its requests wait for the test.
      if (++verdicts === 2) compactor.hold();
      return '{"alignment": 2, "non_contradiction": 2, "diagnosis": "misses the module names"}';
    });
    const settings = { ...defaultSettings(), judge: { enabled: true, threshold: 7 }, blockTokens: 2048 };
    const c = new SessionController({
      store,
      ledger,
      env: { settings, contextWindow: window, agent: new FakeModel(() => 'Sure.'), compactor, compactorLimiter: unlimited, judge },
      ...controllerDefaults(store, { id: 'p', title: 'P' }),
      clock,
      ids: counterIds(),
      post: (m) => posted.push(m),
    });
    const views = () => posted.flatMap((m) => (m.type === 'compaction' && m.compaction ? [m.compaction] : []));
    await c.handle({ type: 'send', text: 'One more question' });
    await until(() => verdicts === 2 && compactor.inFlight > 0);
    assert.equal(c.isRunning, false, 'the turn has ended: the fallback runs while the agent is idle');
    const fallback = views().at(-1)!;
    assert.equal(fallback.background, false);
    await c.handle({ type: 'compaction-cancel', compactionId: fallback.id });
    await until(() => compactor.inFlight === 0);
    assert.ok(compactor.aborted > 0, "Cancel aborted the fallback's requests");
    compactor.release();
    await until(() => views().at(-1)?.state !== 'running');
    assert.deepEqual(store.snapshot.compactions, [], 'nothing adopted');
    const errors = posted.filter((m) => m.type === 'notice' && m.level === 'error');
    assert.deepEqual(errors, [], 'a cancel the user asked for is not reported as an error');
    await c.dispose();
  });

  it('a compaction the agent waits for, made stale by one the user adopted meanwhile, is not needed once the context fits', async () => {
    const store = await history(12);
    const ledger = new TokenLedger(new CharEstimateCounter());
    const compactor = new FakeModel();
    const agent = new FakeModel(() => 'Done.');
    const reserve = agentSettingsFrom(defaultSettings(), 100_000).replyReserve;
    // At 96 % of the room the prompt has: the agent waits for a compaction before its first request.
    const window = Math.ceil(ledger.total(store.active().messages) / 0.96) + reserve;
    const { loop, settings, events } = loopOn(store, ledger, agent, compactor, window, true);
    compactor.hold();
    const run = loop.send('go on', new AbortController().signal);
    await until(() => compactor.inFlight > 0);
    assert.ok(events.some((e) => e.type === 'trigger-fired' && e.trigger === 'block'));
    // The user's own compaction (another compactor), adopted by hand while the agent waits.
    const ids = counterIds();
    const mine = {
      store,
      ledger,
      compactor: new FakeModel(),
      compactorLimiter: unlimited,
      clock: fixedClock(),
      ids: { next: (p: string) => `U${ids.next(p)}` },
    };
    const { pending } = planSessionCompaction(mine, { strategy: 'token-fraction' }, [], settings.compaction, settings.replyReserve);
    await pending.start();
    await adoptPlanned(pending, store);
    compactor.release();
    const outcome = await run;
    assert.equal(outcome.reason, 'answer', JSON.stringify(outcome));
    assert.equal(agent.requests.length, 1, 'the agent answered');
    assert.deepEqual(
      store.snapshot.compactions.map((x) => x.id),
      [pending.id],
      "the user's compaction is in force, the stale one was not adopted",
    );
    const failed = events.find((e) => e.type === 'compaction-failed');
    assert.match(failed && failed.type === 'compaction-failed' ? failed.error : '', /planned on a different version/);
  });
});

describe("the agent's wait line through a refused request", () => {
  it('waits on the background compaction, then on the model again for the retried request', async () => {
    const store = await history(12);
    const ledger = new TokenLedger(new CharEstimateCounter());
    const compactor = new FakeModel();
    const answer = new FakeModel(() => 'Done.');
    let calls = 0;
    const s0 = agentSettingsFrom({ ...defaultSettings(), blockTokens: 256 }, 100_000);
    // 80 % of the room: past hi (a background compaction starts), under block.
    const window = Math.ceil(ledger.total(store.active().messages) / 0.8) + s0.replyReserve;
    const agent: ModelPort = {
      chat: (req, opts) => {
        // The server counts more than the local estimate: the first request is refused as too long.
        if (++calls === 1)
          return Promise.reject(Object.assign(new Error('too long'), { kind: 'context-overflow', window, input: undefined }));
        return answer.chat(req, opts);
      },
    };
    const { loop, events } = loopOn(store, ledger, agent, compactor, window);
    compactor.hold();
    const run = loop.send('go on', new AbortController().signal);
    await until(() => events.some((e) => e.type === 'waiting-for-compaction'));
    compactor.release();
    assert.equal((await run).reason, 'answer');
    assert.equal(calls, 2, 'the refused request was sent again');
    const said = waitsOf(events);
    const at = said.indexOf('compaction background');
    assert.ok(at > 0, said.join(' → '));
    assert.equal(said[at + 1], 'model null', `after the adoption the retried request waits on the model: ${said.join(' → ')}`);
  });
});

describe('a window the server corrects', () => {
  it('moves the compactions to lo of the new prompt room, and the reply reserve to at most half the window', async () => {
    const store = await history(12);
    const ledger = new TokenLedger(new CharEstimateCounter());
    const answer = new FakeModel(() => 'Done.');
    const sent: (number | undefined)[] = [];
    let calls = 0;
    const agent: ModelPort = {
      chat: (req, opts) => {
        sent.push(req.maxTokens);
        // The setting said 100K; the server has 6,000 tokens.
        if (++calls === 1)
          return Promise.reject(Object.assign(new Error('too long'), { kind: 'context-overflow', window: 6_000, input: 7_000 }));
        return answer.chat(req, opts);
      },
    };
    const { loop } = loopOn(store, ledger, agent, new FakeModel(), 100_000);
    await loop.send('go on', new AbortController().signal);
    assert.deepEqual(sent, [4096, 3000], 'the retried request asks for half the corrected window');
    const pending = await loop.compactNow({ focus: undefined, trigger: 'structural', signal: new AbortController().signal });
    assert.equal(pending?.plan.settings.contextWindow, 6_000);
    assert.equal(pending?.plan.settings.targetFraction, (0.4 * (6_000 - 3_000)) / 6_000, 'lo of the corrected room');
  });
});
