import assert from 'node:assert/strict';
import type { ToolCall } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { SessionStore } from '../../src/core/session/sessionStore';
import { ACTIVE_REQUEST_KEEP_TOKENS, planSplit } from '../../src/core/splitPoint';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited, type ToolSpec } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const WINDOW = { contextWindow: 200_000, replyReserve: 4096 };
const REQUEST = 'Read every module. Standing rule for this whole session: never edit vendor/, and answer in French.';

const ids = counterIds();
function deps(): CompactionDeps {
  const model = new FakeModel(() => 'DECISIONS:\n- none\nFACTS:\n- read the modules');
  return {
    model,
    limiter: unlimited,
    count: (m) => counter.countMessage(m),
    clock: fixedClock(),
    ids: { next: (p) => ids.next(`${p}ar`) },
  };
}

/** One long agentic turn: the user's request, then `steps` reads, no user message since. */
async function longTurn(request: string, steps: number, store?: SessionStore): Promise<SessionStore> {
  const s = store ?? (await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl'));
  if (!store) {
    await s.append({ role: 'system', content: 'You are a coding agent.' });
    await s.append({ role: 'user', content: request });
  }
  for (let t = 0; t < steps; t++) {
    const id = `c${s.snapshot.messages.length}`;
    const call: ToolCall = { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/mod${t}.ts"}` } };
    await s.append({ role: 'assistant', content: null, tool_calls: [call] });
    await s.append({ role: 'tool', tool_call_id: id, content: `// src/mod${t}.ts\n${'x = 1;\n'.repeat(400)}` });
  }
  return s;
}

async function compact(store: SessionStore): Promise<void> {
  const snap = snapshotSession(store, new TokenLedger(counter), { strategy: 'token-fraction' }, TOOLS, WINDOW);
  const pc = createCompaction(snap, { ...DEFAULT_COMPACTION_SETTINGS, blockTokens: 2000, contextWindow: WINDOW.contextWindow }, deps());
  await pc.start();
  await pc.adopt(store);
}

describe('the request a long agentic turn works on', () => {
  it('is kept verbatim before the summary, through a second compaction of the same turn', async () => {
    const store = await longTurn(REQUEST, 12);
    const active = () => store.active().messages;
    const tokens = active().map((m) => counter.countMessage(m));
    const { split } = planSplit({ messages: active(), tokens }, { strategy: 'token-fraction' }, WINDOW.contextWindow, WINDOW.replyReserve);
    assert.deepEqual(split.keptIndices, [1], split.note);
    assert.ok(!split.headIndices.includes(1));
    assert.match(split.note, /the request this turn works on \(message 1\) is kept verbatim/);
    await compact(store);
    assert.deepEqual(
      active()
        .slice(0, 3)
        .map((m) => [m.role, m.kind, m.role === 'user' ? m.content : '']),
      [
        ['system', 'normal', ''],
        ['user', 'normal', REQUEST],
        ['user', 'summary', active()[2]!.content],
      ],
    );
    await longTurn(REQUEST, 12, store);
    await compact(store);
    assert.equal(store.snapshot.compactions.length, 2);
    assert.equal(active()[1]!.content, REQUEST, 'still verbatim after the summary of the summary');
    assert.equal(active().filter((m) => m.content === REQUEST).length, 1, 'once');
  });

  it('is summarised like the rest when it is longer than the cap', async () => {
    const long = `${REQUEST} ${'Details of the task. '.repeat(ACTIVE_REQUEST_KEEP_TOKENS / 2)}`;
    const store = await longTurn(long, 12);
    const messages = store.active().messages;
    const tokens = messages.map((m) => counter.countMessage(m));
    assert.ok(tokens[1]! > ACTIVE_REQUEST_KEEP_TOKENS);
    const { split } = planSplit({ messages, tokens }, { strategy: 'token-fraction' }, WINDOW.contextWindow, WINDOW.replyReserve);
    assert.deepEqual(split.keptIndices, []);
    assert.ok(split.headIndices.includes(1));
  });
});
