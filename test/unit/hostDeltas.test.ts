import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import type { ModelPort, ModelRequest } from '../../src/core/ports';
import { unlimited } from '../../src/core/ports';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { SessionController } from '../../src/host/sessionController';
import type { HostToWebview, SplitView } from '../../src/protocol/messages';
import { applySplitChange } from '../../src/protocol/messages';
import { controllerDefaults } from './helpers/controllerDefaults';
import { FakeModel } from './helpers/fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './helpers/memoryStorage';

async function setup(wantsDeltas?: () => boolean, chat?: ModelPort['chat']) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/one.jsonl');
  await store.append({ role: 'system', content: 'You are a test agent.' });
  const agent = new FakeModel();
  agent.chat = async (req: ModelRequest) => {
    const last = req.messages[req.messages.length - 1]!;
    return { message: { role: 'assistant', content: `ok: ${String(last.content).slice(0, 10)}` }, usage: undefined, finishReason: 'stop' };
  };
  if (chat) agent.chat = chat;
  const posted: HostToWebview[] = [];
  let stateChanges = 0;
  const c = new SessionController({
    store,
    ledger: new TokenLedger(new CharEstimateCounter()),
    env: {
      settings: { ...defaultSettings(), judge: { enabled: false, threshold: 7 } },
      contextWindow: 32_768,
      agent,
      compactor: agent,
      compactorLimiter: unlimited,
      judge: agent,
    },
    ...controllerDefaults(store, { id: 'one', title: 'One' }),
    approvalPreview: async (call) => ({ kind: 'ask', detail: { summary: call.summary } }),
    clock: fixedClock(),
    ids: counterIds(),
    post: (m) => posted.push(m),
    onStateChange: () => stateChanges++,
    ...(wantsDeltas ? { wantsDeltas } : {}),
  });
  return { c, posted, stateChanges: () => stateChanges };
}

const snapshotOf = (posted: HostToWebview[]) =>
  (posted.filter((m) => m.type === 'snapshot').pop() as Extract<HostToWebview, { type: 'snapshot' }>).snapshot;

describe('host: deltas only when someone listens, and only what changed', () => {
  it('sends the end of the allowed list per message, which rebuilds exactly the list a full snapshot has', async () => {
    const { c, posted } = await setup();
    try {
      await c.handle({ type: 'ready' });
      let split: SplitView = snapshotOf(posted).split;
      for (const text of ['first question', 'second question', 'third question']) await c.handle({ type: 'send', text });
      const added = posted.filter((m): m is Extract<HostToWebview, { type: 'message-added' }> => m.type === 'message-added');
      assert.equal(added.length, 6);
      for (const m of added) {
        assert.ok(!('allowed' in m.split), 'the whole allowed list is not resent');
        assert.ok('allowedAppend' in m.split && m.split.allowedAppend.length <= 2);
        split = applySplitChange(split, m.split);
      }
      await c.handle({ type: 'ready' });
      assert.deepEqual(split.allowed, snapshotOf(posted).split.allowed);
      assert.equal(split.allowed.at(-1), 7);
    } finally {
      await c.dispose();
    }
  });

  it('builds no deltas while nobody listens; the next visible gets a full snapshot', async () => {
    let listening = false;
    const { c, posted, stateChanges } = await setup(() => listening);
    try {
      await c.handle({ type: 'send', text: 'while hidden' });
      assert.deepEqual(
        posted.filter((m) => m.type === 'message-added' || m.type === 'snapshot'),
        [],
      );
      assert.ok(stateChanges() >= 2, 'the status bar still follows');
      listening = true;
      await c.handle({ type: 'visible' });
      const s = snapshotOf(posted);
      assert.deepEqual(
        s.messages.map((m) => m.role),
        ['system', 'user', 'assistant'],
      );
      await c.handle({ type: 'send', text: 'now shown' });
      assert.equal(posted.filter((m) => m.type === 'message-added').length, 2);
    } finally {
      await c.dispose();
    }
  });

  it('joins the deltas of one transport batch into one message, in order with everything else', async () => {
    const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
    // Three batches of ten deltas, as the paced transport delivers them: each batch in one turn of the event loop.
    const chat: ModelPort['chat'] = async (_req, opts) => {
      for (let b = 0; b < 3; b++) {
        await new Promise((r) => setTimeout(r, 5));
        for (const w of words.slice(10 * b, 10 * b + 10)) opts?.onDelta?.({ type: 'content', text: w });
      }
      return { message: { role: 'assistant', content: words.join('') }, usage: undefined, finishReason: 'stop' };
    };
    const { c, posted } = await setup(undefined, chat);
    try {
      await c.handle({ type: 'ready' });
      await c.handle({ type: 'send', text: 'stream please' });
      const deltas = posted.flatMap((m, i) => (m.type === 'assistant-delta' ? [{ i, text: m.text }] : []));
      assert.equal(deltas.length, 3, 'one message per batch, not one per delta');
      assert.equal(deltas.map((d) => d.text).join(''), words.join(''));
      // The wait line: the model's first tokens before the text; the text ends it in the view, with no post between.
      const waits = posted.flatMap((m, i) => (m.type === 'agent-waiting' ? [{ i, on: m.waiting?.on ?? null }] : []));
      assert.deepEqual(
        waits.filter((w) => w.i < deltas[0]!.i).map((w) => w.on),
        ['model'],
      );
      assert.equal(waits.filter((w) => w.i > deltas[0]!.i && w.i < deltas.at(-1)!.i).length, 0);
      const reply = posted.findIndex((m) => m.type === 'message-added' && m.message.role === 'assistant');
      assert.ok(reply > deltas.at(-1)!.i, 'the finished message comes after the last delta');
    } finally {
      await c.dispose();
    }
  });
});

describe('host: a reply streamed again after a dropped connection', () => {
  it("voids what the view streamed of the dropped attempt, says so, and streams the retry's text", async () => {
    const { c, posted } = await setup(undefined, async (_req, opts) => {
      opts?.onDelta?.({ type: 'content', text: 'The retry loop backs o' });
      // Let the coalescer send the partial text, as a real stream's pause would.
      await new Promise((r) => setImmediate(r));
      opts?.onDelta?.({ type: 'content', text: 'ff and' });
      opts?.onDelta?.({ type: 'reset', attempt: 2, reason: 'the connection was dropped' });
      opts?.onDelta?.({ type: 'content', text: 'It backs off exponentially.' });
      return { message: { role: 'assistant', content: 'It backs off exponentially.' }, usage: undefined, finishReason: 'stop' };
    });
    try {
      await c.handle({ type: 'ready' });
      await c.handle({ type: 'send', text: 'How does the retry loop work?' });
      const stream = posted.filter((m) => m.type === 'assistant-delta' || m.type === 'assistant-reset');
      const reset = stream.findIndex((m) => m.type === 'assistant-reset');
      assert.ok(reset > 0, JSON.stringify(stream));
      const text = (from: number, to?: number) =>
        stream
          .slice(from, to)
          .map((m) => (m.type === 'assistant-delta' ? m.text : ''))
          .join('');
      assert.equal(text(0, reset), 'The retry loop backs o', "the dropped attempt's text not sent yet is not sent at all");
      assert.equal(text(reset + 1), 'It backs off exponentially.');
      assert.ok(
        posted.some(
          (m) =>
            m.type === 'notice' &&
            m.level === 'warning' &&
            /reply failed partway and is asked for again \(attempt 2\): the connection was dropped/.test(m.text),
        ),
      );
    } finally {
      await c.dispose();
    }
  });
});
