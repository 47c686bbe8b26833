import assert from 'node:assert/strict';
import {
  capTurnToBudget,
  clearConsumedToolResults,
  pretrim,
  truncateHeadTail,
  truncateLargeToolOutputs,
  CLEARED_PLACEHOLDER,
  DEFAULT_PRETRIM,
} from '../../src/core/pretrim';
import { baseSalience, linesReferredBy } from '../../src/core/fidelity/salience';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { asst, toolPair, user } from './helpers/build';
import { snapshotSession } from '../../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import { buildWorkerPrompt } from '../../src/core/compaction/workerPrompt';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const filler = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `  step ${from + i} finished`);

describe('fidelity: salience-aware pre-trim', () => {
  it('keeps an error line and a failing test from the middle of a 3,000-line log within the same line budget', () => {
    const lines = filler(3000);
    lines[1400] = 'QuotaBurstError: shard seven rejected the write';
    lines[2100] = '  ✗ rejects duplicate header keys';
    const opts = { maxLines: 200, maxChars: 1e9, headLines: 60, tailLines: 60 };
    const plain = truncateHeadTail(lines.join('\n'), opts);
    assert.ok(!plain.text.includes('QuotaBurstError'), 'the plain cut loses it (the defect this fixes)');
    const r = truncateHeadTail(lines.join('\n'), opts, baseSalience);
    const out = r.text.split('\n');
    assert.ok(out.includes('QuotaBurstError: shard seven rejected the write'));
    assert.ok(out.includes('  ✗ rejects duplicate header keys'));
    assert.equal(out[0], lines[0]);
    assert.equal(out[out.length - 1], lines[2999]);
    assert.ok(out.length <= plain.text.split('\n').length + 2, `${out.length} lines`);
    const kept = out.filter((l) => !l.startsWith('[… ')).length;
    assert.equal(r.linesCut, 3000 - kept);
    const markers = out.filter((l) => l.startsWith('[… ')).map((l) => Number(l.match(/\d+/)![0]));
    assert.equal(
      markers.reduce((a, b) => a + b, 0),
      r.linesCut,
      'the markers account for every cut line',
    );
  });

  it('keeps lines whose identifiers the conversation mentions later, first when the budget is tight', () => {
    const cfg = filler(400);
    cfg[200] = 'poolIdleTimeout = 9';
    cfg[250] = 'someOtherSetting = 3';
    const msgs = [user('read the config'), ...toolPair('read_file', cfg.join('\n')), asst('poolIdleTimeout looks too low; raising it.')];
    const r = truncateLargeToolOutputs(msgs, { ...DEFAULT_PRETRIM, salience: true });
    const text = r.messages[2]!.content!;
    assert.ok(text.includes('poolIdleTimeout = 9'));
    // someOtherSetting is a plain identifier line (score 1): it is kept too, since the budget allows.
    assert.ok(text.includes('someOtherSetting = 3'));
    const tight = truncateLargeToolOutputs(msgs, { ...DEFAULT_PRETRIM, headLines: 5, tailLines: 5, maxLines: 20 });
    const t2 = tight.messages[2]!.content!;
    assert.ok(t2.includes('poolIdleTimeout = 9'), 'the mentioned line wins a tight budget');
    assert.equal(t2.split('\n').length <= 11 + 2, true);
    assert.equal(msgs[2]!.content, cfg.join('\n'), 'the original is untouched');
  });

  it('cuts an enormous single line by chunks, keeping the chunk with the error and never splitting a token', () => {
    const json = `{"items":[${Array.from({ length: 2000 }, (_, i) => (i === 1000 ? '"ECONNRESET while syncing"' : `"plain item ${i}"`)).join(',')}]}`;
    const r = truncateHeadTail(json, { maxLines: 200, maxChars: 4000, headLines: 60, tailLines: 60 }, baseSalience);
    assert.ok(r.text.includes('ECONNRESET while syncing'));
    assert.ok(r.text.length <= 4000 + 200, `${r.text.length} chars`);
    assert.ok(r.text.startsWith('{"items":['));
    assert.ok(r.text.endsWith(']}'));
  });

  it('output with nothing salient in the middle is cut exactly as before', () => {
    const text = filler(1000).join('\n');
    const opts = { maxLines: 200, maxChars: 1e9, headLines: 10, tailLines: 5 };
    assert.deepEqual(truncateHeadTail(text, opts, baseSalience), truncateHeadTail(text, opts));
  });

  it('clearing a consumed result keeps the lines the next assistant message referred to', () => {
    const out = ['listing:', ...filler(50), 'src/db/migrate.ts: 41 errors', ...filler(50, 60), 'maxPoolSize: 48'].join('\n');
    const msgs = [
      user('u'),
      ...toolPair('a', out),
      asst('The failures are in src/db/migrate.ts and maxPoolSize is set.'),
      ...toolPair('b', 'x'),
    ];
    const frozen = JSON.stringify(msgs);
    const r = clearConsumedToolResults(msgs, 1);
    const c = r.messages[2]!.content!;
    assert.ok(c.startsWith(CLEARED_PLACEHOLDER));
    assert.match(c, /src\/db\/migrate\.ts: 41 errors/);
    assert.match(c, /maxPoolSize: 48/);
    assert.ok(!c.includes('step 3 finished'));
    assert.equal(JSON.stringify(msgs), frozen);
    const plain = pretrim(msgs, { ...DEFAULT_PRETRIM, keepRecentToolResults: 1, salience: false });
    assert.ok(!plain.messages[2]!.content!.includes('maxPoolSize'), 'salience off gives the plain placeholder');
  });

  it('the lines a reply refers to are remembered per result and reply, and a larger limit is not served from a smaller one', () => {
    const result = ['alphaOne: 1', 'betaTwo: 2', 'gammaThree: 3', 'nothing here'].join('\n');
    const reply = 'Check alphaOne, betaTwo and gammaThree.';
    assert.deepEqual(linesReferredBy(result, reply, 1), ['alphaOne: 1']);
    assert.deepEqual(linesReferredBy(result, reply, 5), ['alphaOne: 1', 'betaTwo: 2', 'gammaThree: 3']);
    assert.deepEqual(linesReferredBy(result, reply, 2), ['alphaOne: 1', 'betaTwo: 2']);
    assert.deepEqual(linesReferredBy(result, 'Only gammaThree matters.', 5), ['gammaThree: 3']);
  });

  it('capping a preserved turn keeps the error line of the output it cuts', () => {
    const counter = new CharEstimateCounter();
    const count = (m: Parameters<typeof counter.countMessage>[0]) => counter.countMessage(m);
    const log = [...filler(1500), 'ShardLeaseError: lease lost on shard nine', ...filler(1500, 1500)].join('\n');
    const turn = [user('run it'), ...toolPair('run', log), asst('done')];
    const r = capTurnToBudget(turn, 3_000, count);
    assert.deepEqual(r.cutIds, [turn[2]!.id]);
    assert.ok(r.messages.reduce((s, m) => s + count(m), 0) <= 3_000);
    assert.match(r.messages[2]!.content!, /ShardLeaseError: lease lost on shard nine/);
  });
});

describe('fidelity: one cut per tool output, salient against the whole conversation', () => {
  /**
   * Turn 0 reads a 300-line config whose lines all name a setting (each one salient on its own, more than the
   * cut keeps); only turn `mentionAt` talks about the middle one again.
   */
  async function session(mentionAt: number) {
    const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
    await store.append({ role: 'system', content: 'You are a coding agent.' });
    for (let t = 0; t < 12; t++) {
      await store.append({ role: 'user', content: t === mentionAt ? 'Raise leaseRenewMillis to 9000, as the config says.' : `Turn ${t}.` });
      const lines = Array.from({ length: 300 }, (_, i) => `  optionKey${1000 * t + i}: on`);
      if (t === 0) lines[150] = '  leaseRenewMillis: 4000';
      await store.append({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"cfg.yaml"}' } }],
      });
      await store.append({ role: 'tool', tool_call_id: `c${t}`, content: lines.join('\n') });
      await store.append({ role: 'assistant', content: `Read part ${t}.` });
    }
    return snapshotSession(store, new TokenLedger(new CharEstimateCounter()), { strategy: 'token-fraction' }, [], {
      contextWindow: 60_000,
      replyReserve: 2048,
    });
  }

  for (const where of ['a later block', 'the kept tail'] as const) {
    it(`block 0's worker keeps a middle line that only ${where} mentions`, async () => {
      const snap = await session(where === 'a later block' ? 4 : 11);
      const mention = snap.context.findIndex((m) => m.role === 'user' && m.content.includes('leaseRenewMillis'));
      const headHas = snap.split.headIndices.includes(mention);
      assert.equal(headHas, where === 'a later block', `the mention is in ${headHas ? 'the head' : 'the tail'}`);
      const plan = planCompaction(snap, {
        ...DEFAULT_COMPACTION_SETTINGS,
        contextWindow: 60_000,
        profile: UNIT_PROFILE,
        mode: 'parallel',
        layout: 'target-block',
        blockTokens: 2048,
      });
      const own = plan.blocks.find((b) => b.messageIndices.includes(2))!;
      assert.ok(!own.messageIndices.includes(mention), 'the mention is outside the block of the output');
      const prompt = buildWorkerPrompt(plan, own, undefined, (m) => new CharEstimateCounter().countMessage(m));
      assert.match(prompt.targetText, /lines? cut/, 'the output was cut (else the check proves nothing)');
      assert.match(prompt.targetText, /leaseRenewMillis: 4000/);
    });
  }
});
