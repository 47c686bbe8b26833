import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, StoredMessage } from '../../src/core/messages';
import { inspectSession } from '../../src/core/inspect';
import { importMessages } from '../../src/core/session/importMessages';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { splitIntoTurns } from '../../src/core/turns';
import { allToolOutput, empty, noUserMessage, oneGiantMessage, singleTurn, systemOnly } from '../fixtures/edge-cases';
import { counterIds, fixedClock } from './helpers/memoryStorage';

const OPTS = { contextWindow: 32_768, replyReserve: 4_096 };

function stored(raw: ChatMessage[]): StoredMessage[] {
  return importMessages(raw, counterIds(), fixedClock());
}

async function inspect(raw: ChatMessage[], opts = OPTS) {
  const messages = stored(raw);
  const ledger = new TokenLedger(await loadTiktokenCounter());
  return { messages, report: inspectSession(messages, ledger, opts) };
}

/** Invariants every split must keep, whatever the strategy. */
function assertWellFormed(messages: StoredMessage[], r: { tailStartIndex: number; keptIndices: number[]; headIndices: number[] }) {
  const tail = messages.slice(r.tailStartIndex);
  assert.ok(r.tailStartIndex >= 0 && r.tailStartIndex <= messages.length);
  assert.notEqual(tail[0]?.role, 'tool', 'the tail never opens with an orphaned tool result');
  const head = new Set(r.headIndices);
  for (const i of r.keptIndices) assert.ok(!head.has(i), 'a message is either kept or summarised');
  for (const i of r.headIndices) assert.notEqual(messages[i]!.role, 'system', 'the system prompt is never summarised');
  // every call in the kept tail has its result in the tail too, and vice versa
  const calls = new Set(tail.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])));
  for (const m of tail) if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id), `tail result ${m.tool_call_id} lost its call`);
}

describe('split strategies on a long realistic agent session', function () {
  this.timeout(20_000);
  const raw = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'long-session.json'), 'utf8')) as ChatMessage[];

  it('the fixture is what the tests claim: ≥300 messages, tool calls, big outputs, several user turns', () => {
    assert.ok(raw.length >= 300);
    assert.ok(splitIntoTurns(raw).length >= 8);
    assert.ok(raw.some((m) => m.role === 'tool' && m.content.length > 20_000));
  });

  it('token-fraction keeps about 30% of tokens, starting on a user message', async () => {
    // A window the whole session fits in: 30 % of all its tokens.
    const { messages, report } = await inspect(raw, { contextWindow: 262_144, replyReserve: 4_096 });
    const s = report.strategies['token-fraction'];
    assertWellFormed(messages, s);
    assert.equal(messages[s.tailStartIndex]!.role, 'user');
    const tailTokens = report.messages.slice(s.tailStartIndex).reduce((a, m) => a + m.tokens, 0);
    assert.ok(tailTokens <= 0.3 * report.totalTokens, 'snapping forward never keeps more than p');
    // the previous user message would have kept more than 30%: the snap is the nearest one
    const prevUser = messages
      .slice(0, s.tailStartIndex)
      .map((m) => m.role)
      .lastIndexOf('user');
    const prevTokens = report.messages.slice(prevUser).reduce((a, m) => a + m.tokens, 0);
    assert.ok(prevTokens >= 0.3 * report.totalTokens);
  });

  it('token-fraction on a session larger than the window keeps 30% of what the window holds, not of the session', async () => {
    const { messages, report } = await inspect(raw);
    assert.ok(report.totalTokens > OPTS.contextWindow, 'fixture: the session is larger than the window');
    const s = report.strategies['token-fraction'];
    assertWellFormed(messages, s);
    const room = OPTS.contextWindow - OPTS.replyReserve;
    const tailTokens = report.messages.slice(s.tailStartIndex).reduce((a, m) => a + m.tokens, 0);
    // 30 % of 159K tokens alone was 47.6K, over the window: a compaction there could never be adopted.
    // About 30 % of the room (the walk back ends on a whole message, and never between a call and its results).
    assert.ok(tailTokens > 0.25 * room && tailTokens < 0.35 * room, `tail ${tailTokens} tokens in a ${room}-token room`);
  });

  it('recent-turns keeps exactly the last two turns', async () => {
    const { messages, report } = await inspect(raw);
    const s = report.strategies['recent-turns'];
    assertWellFormed(messages, s);
    const turns = splitIntoTurns(messages);
    assert.equal(s.tailStartIndex, turns[turns.length - 2]!.start);
    assert.equal(s.turnBudget, 7_168, '25% of 28 672 usable tokens');
  });

  it('user-messages keeps user messages newest-first within 20K and summarises all agent output', async () => {
    const { messages, report } = await inspect(raw);
    const s = report.strategies['user-messages'];
    assertWellFormed(messages, s);
    assert.ok(s.keptIndices.length > 0);
    assert.ok(s.keptIndices.every((i) => messages[i]!.role === 'user'));
    const keptTokens = s.keptIndices.reduce((a, i) => a + report.messages[i]!.tokens, 0);
    assert.ok(keptTokens <= 20_000);
    const users = messages.map((m, i) => (m.role === 'user' ? i : -1)).filter((i) => i >= 0);
    assert.deepEqual(s.keptIndices, users.slice(users.length - s.keptIndices.length), 'the newest user messages, in order');
    assert.ok(messages.every((m, i) => m.role === 'system' || m.role === 'user' || s.headIndices.includes(i)));
  });
});

describe('split strategies on edge cases', () => {
  it('empty session: nothing to split', async () => {
    const { report } = await inspect(empty);
    for (const s of Object.values(report.strategies)) {
      assert.equal(s.tailStartIndex, 0);
      assert.deepEqual(s.headIndices, []);
    }
  });

  it('system prompt only: nothing is ever summarised', async () => {
    const { report } = await inspect(systemOnly);
    for (const s of Object.values(report.strategies)) assert.deepEqual(s.headIndices, []);
  });

  it('no user message: strategies that need user boundaries summarise the agent items, token-fraction keeps its recent share', async () => {
    const { messages, report } = await inspect(noUserMessage);
    const s = report.strategies;
    assert.equal(s['recent-turns'].tailStartIndex, messages.length);
    assert.equal(s['user-messages'].tailStartIndex, messages.length);
    assertWellFormed(messages, s['token-fraction']);
    assert.ok(s['token-fraction'].tailStartIndex < messages.length);
  });

  it('one giant message: it stays in the tail (token-fraction, recent-turns) and is too big for the user-message cap', async () => {
    const { messages, report } = await inspect(oneGiantMessage);
    const giant = messages.findIndex((m) => m.role === 'user');
    assert.equal(report.strategies['token-fraction'].tailStartIndex, giant);
    assert.equal(report.strategies['recent-turns'].tailStartIndex, giant);
    assert.deepEqual(report.strategies['user-messages'].keptIndices, []);
  });

  it('all tool output in one turn: token-fraction keeps a recent run of whole call/result pairs', async () => {
    const { messages, report } = await inspect(allToolOutput);
    const s = report.strategies['token-fraction'];
    assertWellFormed(messages, s);
    assert.equal(messages[s.tailStartIndex]!.role, 'assistant');
    assert.ok(s.headIndices.length > 0 && s.tailStartIndex < messages.length);
    assert.equal(report.strategies['recent-turns'].tailStartIndex, 1, 'a single turn is kept whole');
  });

  it('single turn: nothing to summarise under recent-turns', async () => {
    const { report } = await inspect(singleTurn);
    assert.deepEqual(report.strategies['recent-turns'].headIndices, []);
  });
});
