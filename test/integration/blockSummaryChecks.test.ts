/**
 * A worker's reply that came back but is not a usable summary (cut off at max_tokens, a refusal) fails its block, so
 * nothing is adopted; a cut-off one is retried at once with more room. Over real HTTP against the simulator, whose
 * `content` / `finishReason` faults stand in for a server that answers that way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_TOOL_SPECS } from '../../src/core/agent/toolSpecs';
import { main } from '../../src/cli/main';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import type { ModelPort } from '../../src/core/ports';
import { MemoryStorage } from '../../src/core/session/memoryStorage';
import { SessionStore } from '../../src/core/session/sessionStore';
import { randomIds, systemClock } from '../../src/core/session/storage';
import { loadTiktokenCounter } from '../../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { Semaphore, VllmClient } from '../../src/llm';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

const fixture = join(__dirname, '..', 'fixtures', 'long-session.json');
const CUT = 'DECISIONS:\n- We decided to';
const REFUSAL = "I'm sorry, but I can't help with that.";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t + '\n'), err: (t) => (err += t + '\n') });
  return { code, out, err };
}

describe('a block summary cut off at max_tokens or refused, against the simulator', function () {
  this.timeout(120_000);
  let sim: SimHandle;
  let ledger: TokenLedger;

  before(async () => {
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
    ledger = new TokenLedger(await loadTiktokenCounter());
  });
  after(() => sim.close());
  beforeEach(() => {
    sim.clearFaults();
    sim.resetCache();
    sim.resetStats();
  });

  /** A compaction of the fixture whose requests' max_tokens are recorded as sent. */
  async function pending(over: Partial<CompactionSettings>) {
    const store = await SessionStore.importArray({ storage: new MemoryStorage() }, '/m.jsonl', JSON.parse(readFileSync(fixture, 'utf8')));
    const client = new VllmClient({ baseURL: sim.url });
    const maxTokens: Array<number | undefined> = [];
    const model: ModelPort = {
      chat: (req, opts) => {
        maxTokens.push(req.maxTokens);
        return client.chat(req, opts);
      },
    };
    const snap = snapshotSession(store, ledger, { strategy: 'token-fraction' }, AGENT_TOOL_SPECS, {
      contextWindow: 200_000,
      replyReserve: 4096,
    });
    const pc = createCompaction(
      snap,
      { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 200_000, ...over },
      { model, limiter: new Semaphore(64), count: (m) => ledger.estimate(m), clock: systemClock, ids: randomIds },
    );
    const events: CompactionEvent[] = [];
    pc.on((e) => events.push(e));
    return { pc, store, maxTokens, events };
  }

  async function importedLog(): Promise<string> {
    const log = join(mkdtempSync(join(tmpdir(), 'sp-checks-')), 'session.jsonl');
    const r = await cli('import', fixture, '--out', log);
    assert.equal(r.code, 0, r.err);
    return log;
  }

  it('`compact --adopt` with every reply cut off at max_tokens: each block is retried once, fails, and nothing is adopted', async () => {
    const log = await importedLog();
    const before = readFileSync(log);
    sim.injectFault({ content: CUT, finishReason: 'length', times: 1000 });
    const r = await cli('compact', '--session', log, '--endpoint', sim.url, '--no-stream', '--adopt');
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /blocks failed \(first: block \d+: the summary was cut off at max_tokens \(\d+\) before it was complete/);
    assert.match(r.err, /Nothing was adopted/);
    assert.doesNotMatch(r.err + r.out, /Adopted into the session log/);
    assert.ok(readFileSync(log).equals(before), 'the session log is byte for byte as it was');
    const failed = r.err.match(/block \d+: failed: .*/g) ?? [];
    const retried = r.err.match(/block \d+: retry 2/g) ?? [];
    assert.ok(failed.length > 0 && retried.length === failed.length, `${failed.length} failed, ${retried.length} retried`);
  });

  it('`compact --adopt` tries a block the server failed once more, alone, and adopts when it then succeeds', async () => {
    const log = await importedLog();
    // One sequential worker: the client's own four attempts all meet a 503, so the block fails; the fifth request is fine.
    sim.injectFault({ status: 503, headers: { 'retry-after': '0' }, times: 4 });
    const r = await cli('compact', '--session', log, '--endpoint', sim.url, '--no-stream', '--mode', 'sequential', '--adopt');
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /retrying 1 block\(s\) the server failed, once/);
    assert.match(r.out, /Adopted into the session log/);
  });

  it('`compact --adopt` with a refusal for every block: the blocks fail as "not a summary" and nothing is adopted', async () => {
    const log = await importedLog();
    const before = readFileSync(log);
    sim.injectFault({ content: REFUSAL, times: 1000 });
    const r = await cli('compact', '--session', log, '--endpoint', sim.url, '--adopt');
    assert.equal(r.code, 1, r.err);
    assert.match(
      r.err,
      /the reply is not a summary: it lacks the DECISIONS, FACTS, OPEN, ERRORS and CONSTRAINTS sections its prompt asked for \(it begins "I'm sorry/,
    );
    assert.match(r.err, /Nothing was adopted/);
    assert.ok(readFileSync(log).equals(before), 'the session log is byte for byte as it was');
    // A refusal at temperature 0 would come again: no retry, at once or by the command (the developer may regenerate).
    assert.doesNotMatch(r.err, /retry 2|retrying/);
  });

  it('a reply cut off once is retried at once with twice the max_tokens, and the good retry completes the compaction', async () => {
    const { pc, store, maxTokens, events } = await pending({ mode: 'sequential' });
    sim.injectFault({ content: CUT, finishReason: 'length' });
    await pc.start();
    assert.ok(pc.isComplete(), pc.blocks.map((b) => `${b.status} ${b.error ?? ''}`).join('; '));
    assert.equal(maxTokens.length, 2);
    assert.equal(maxTokens[1], 2 * maxTokens[0]!, `max_tokens ${maxTokens.join(' → ')}`);
    const retried = events.filter((e) => e.type === 'block-retried');
    assert.equal(retried.length, 1);
    assert.match((retried[0] as { reason: string }).reason, new RegExp(`cut off at max_tokens \\(${maxTokens[0]}\\)`));
    assert.equal(events.filter((e) => e.type === 'block-failed').length, 0);
    assert.equal(pc.blocks[0]!.stats!.attempts, 2);
    assert.doesNotMatch(pc.summaryText(), /We decided to$/m, 'the cut reply is not in the summary');
    await pc.adopt(store);
    assert.equal(store.snapshot.compactions.length, 1);
  });

  it('cut off again, the block fails with the error; a retry of it (retryFailed) asks for twice as much again', async () => {
    const { pc, store, maxTokens } = await pending({ mode: 'sequential' });
    sim.injectFault({ content: CUT, finishReason: 'length', times: 2 });
    await pc.start();
    assert.equal(pc.isComplete(), false);
    assert.equal(pc.blocks[0]!.status, 'failed');
    assert.equal(
      pc.blocks[0]!.error,
      `the summary was cut off at max_tokens (${maxTokens[1]}) before it was complete (finish reason: length)`,
    );
    await assert.rejects(pc.adopt(store), /Not every block has a summary yet: 0 \(failed\)/);
    assert.equal(store.snapshot.compactions.length, 0, 'nothing adopted');
    await pc.retryFailed();
    assert.ok(pc.isComplete());
    assert.deepEqual(maxTokens, [maxTokens[0], 2 * maxTokens[0]!, 4 * maxTokens[0]!]);
  });

  it("the developer's own edit of a failed block is kept as written: it is not checked for the sections", async () => {
    const { pc, store } = await pending({ blockTokens: 16384 });
    sim.injectFault({ content: REFUSAL, times: 1000 });
    await pc.start();
    assert.ok(pc.blocks.length > 1);
    assert.ok(pc.blocks.every((b) => b.status === 'failed' && /not a summary/.test(b.error!)));
    for (const b of pc.blocks) pc.edit(b.index, `my own notes on block ${b.index}`);
    assert.ok(pc.isComplete());
    await pc.adopt(store);
    assert.match(store.active().messages.find((m) => m.kind === 'summary')!.content!, /my own notes on block 0/);
  });

  it('a summary with markdown headings, or without a section it had nothing for, is kept', async () => {
    const { pc } = await pending({ blockTokens: 16384 });
    sim.injectFault({ content: '## Decisions\n- use the streaming parser\n**Facts:**\n- src/parser/lexer.ts', times: 1000 });
    await pc.start();
    assert.ok(pc.isComplete(), pc.blocks.map((b) => `${b.status} ${b.error ?? ''}`).join('; '));
  });
});
