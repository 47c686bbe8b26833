import assert from 'node:assert/strict';
import {
  capTurnToBudget,
  clearConsumedToolResults,
  deduplicateToolOutputs,
  pretrim,
  truncateHeadTail,
  CLEARED_PLACEHOLDER,
  DEFAULT_PRETRIM,
} from '../../src/core/pretrim';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { asst, sys, toolPair, user } from './helpers/build';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n');

describe('pre-trim', () => {
  it('clears consumed old tool results to a placeholder that names the recall id, keeping the recent ones', () => {
    const msgs = [sys('s'), user('u'), ...toolPair('a', 'out-a'), ...toolPair('b', 'out-b'), ...toolPair('c', 'out-c'), asst('done')];
    const frozen = JSON.stringify(msgs);
    const r = clearConsumedToolResults(msgs, 1);
    assert.equal(r.report.cleared.length, 2);
    assert.ok(r.messages[3]!.content!.startsWith(CLEARED_PLACEHOLDER));
    assert.match(r.messages[3]!.content!, new RegExp(`recall id ${msgs[3]!.id}`));
    assert.equal(r.messages[7]!.content, 'out-c', 'the most recent result is kept');
    assert.equal(JSON.stringify(msgs), frozen, 'the originals are untouched');
  });

  it('does not clear a result the model has not seen yet', () => {
    const msgs = [user('u'), ...toolPair('a', 'out-a')];
    assert.equal(clearConsumedToolResults(msgs, 0).report.cleared.length, 0);
  });

  it('truncates to head and tail with the count of lines cut', () => {
    const r = truncateHeadTail(lines(1000), { maxLines: 200, maxChars: 1e9, headLines: 10, tailLines: 5 });
    assert.equal(r.linesCut, 985);
    const out = r.text.split('\n');
    assert.equal(out[0], 'line 1');
    assert.equal(out[10], '[… 985 lines cut …]');
    assert.equal(out[out.length - 1], 'line 1000');
  });

  it('cuts a single enormous line by characters', () => {
    const r = truncateHeadTail('x'.repeat(100_000), { maxLines: 200, maxChars: 1000, headLines: 10, tailLines: 10 });
    assert.ok(r.text.length < 1100);
    assert.equal(r.charsCut, 99_000);
    assert.match(r.text, /\[… 99000 chars cut …\]/);
  });

  it('replaces earlier identical outputs with a pointer to the latest copy', () => {
    const big = lines(50, 'export const value =');
    const msgs = [user('u'), ...toolPair('read_file', big), asst('hm'), ...toolPair('read_file', big), ...toolPair('read_file', 'small')];
    const r = deduplicateToolOutputs(msgs);
    assert.deepEqual(r.report.deduplicated, [{ id: msgs[2]!.id, sameAs: msgs[5]!.id }]);
    assert.equal(r.messages[5]!.content, big);
    assert.match(r.messages[2]!.content!, /Identical to the later tool output/);
  });

  it('runs the tiers cheapest first and reports each', () => {
    const huge = lines(5000);
    const msgs = [user('u'), ...toolPair('a', huge), asst('ok'), ...toolPair('b', huge), asst('ok'), ...toolPair('c', lines(400, 'log'))];
    const r = pretrim(msgs, { ...DEFAULT_PRETRIM, keepRecentToolResults: 2 });
    assert.equal(r.report.cleared.length, 1);
    assert.equal(r.report.truncated.length, 2);
    assert.deepEqual(r.report.deduplicated, [], 'the cleared copy is no longer a duplicate');
    assert.ok(r.messages.every((m) => (m.content ?? '').length <= DEFAULT_PRETRIM.maxChars + 100));
  });

  it('keeps a setting from the middle of a long test log over its hundreds of passing tests', () => {
    const log = Array.from({ length: 800 }, (_, i) => `    ✔ passes case ${i} (${i % 9}ms)`);
    log[450] = 'config: QUANTUM_FLUX_LIMIT=7741 (read from .env.test)';
    const msgs = [user('u'), ...toolPair('run_tests', log.join('\n')), asst('ok')];
    const out = pretrim(msgs).messages[2]!.content!.split('\n');
    assert.ok(out.length < 800, 'the log was cut');
    assert.ok(out.includes(log[450]!));
  });

  it('caps an over-budget turn by cutting its largest tool outputs only', () => {
    const counter = new CharEstimateCounter();
    const turn = [user('u'.repeat(400)), ...toolPair('a', 'A'.repeat(40_000)), ...toolPair('b', 'B'.repeat(8_000)), asst('answer')];
    const count = (m: Parameters<typeof counter.countMessage>[0]) => counter.countMessage(m);
    const before = turn.reduce((s, m) => s + count(m), 0);
    const r = capTurnToBudget(turn, 5_000, count);
    const after = r.messages.reduce((s, m) => s + count(m), 0);
    assert.ok(before > 12_000 && after <= 5_000, `before ${before}, after ${after}`);
    assert.equal(r.messages[0]!.content, turn[0]!.content);
    assert.equal(r.messages[5]!.content, 'answer');
    assert.deepEqual(r.cutIds, [turn[2]!.id]);
  });
});
