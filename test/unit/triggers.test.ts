import assert from 'node:assert/strict';
import {
  evaluateBudget,
  evaluateIdle,
  evaluateOverflow,
  evaluateStructural,
  validateThresholds,
  DEFAULT_THRESHOLDS,
  INITIAL_BUDGET_STATE,
} from '../../src/core/triggers';
import type { BudgetState } from '../../src/core/triggers';

const W = 100_000;

describe('budget trigger with hysteresis', () => {
  it('fires once on crossing hi, not again while the compaction runs or usage stays high', () => {
    let state: BudgetState = INITIAL_BUDGET_STATE;
    const step = (used: number, running: boolean) => {
      const r = evaluateBudget(used, W, DEFAULT_THRESHOLDS, state, running);
      state = r.state;
      return r.decision.kind;
    };
    assert.equal(step(50_000, false), 'ok');
    assert.equal(step(76_000, false), 'start-background');
    assert.equal(step(80_000, true), 'in-progress');
    assert.equal(step(82_000, false), 'ok', 'a compaction that left usage above hi does not re-fire at once');
    assert.equal(step(60_000, false), 'ok');
    assert.equal(step(77_000, false), 'start-background', 're-armed after usage fell below hi');
  });

  it('tells the agent to wait at block, with lo as the target', () => {
    const r = evaluateBudget(96_000, W, DEFAULT_THRESHOLDS, INITIAL_BUDGET_STATE, true);
    assert.deepEqual(r.decision, { kind: 'wait', usedFraction: 0.96, targetTokens: 40_000 });
  });

  it('validates the thresholds with messages that say what is wrong', () => {
    assert.deepEqual(validateThresholds(DEFAULT_THRESHOLDS), []);
    assert.match(validateThresholds({ hi: 0.5, lo: 0.6, block: 0.9 })[0]!, /lo \(0.6\) must be below hi/);
    assert.match(validateThresholds({ hi: 0.96, lo: 0.4, block: 0.95 })[0]!, /hi \(0.96\) must be below block/);
    assert.match(validateThresholds({ hi: 1.5, lo: 0.4, block: 0.95 })[0]!, /hi must be a number in \(0, 1\]/);
  });
});

describe('structural, temporal and reactive triggers', () => {
  it('turns /compact into an immediate compaction with the focus', () => {
    assert.deepEqual(evaluateStructural({ kind: 'user-compact', focus: 'keep the DB plan' }, { distillToolOutputTokens: 8000 }), {
      kind: 'compact-now',
      focus: 'keep the DB plan',
    });
  });

  it('distils only large tool outputs', () => {
    const o = { distillToolOutputTokens: 8000 };
    assert.equal(evaluateStructural({ kind: 'tool-output', messageId: 'm', tokens: 7999 }, o).kind, 'none');
    assert.deepEqual(evaluateStructural({ kind: 'tool-output', messageId: 'm', tokens: 12_000 }, o), {
      kind: 'distill-tool-output',
      messageId: 'm',
    });
  });

  it('fires once per idle period and only with enough to compact', () => {
    const o = { idleMs: 60_000, minFraction: 0.3 };
    const base = { lastActivityMs: 0, lastIdleCompactionMs: undefined, usedTokens: 40_000, windowTokens: W };
    assert.equal(evaluateIdle({ ...base, nowMs: 59_999 }, o), false);
    assert.equal(evaluateIdle({ ...base, nowMs: 60_000 }, o), true);
    assert.equal(evaluateIdle({ ...base, nowMs: 120_000, lastIdleCompactionMs: 60_000 }, o), false, 'already compacted this idle period');
    assert.equal(evaluateIdle({ ...base, nowMs: 60_000, usedTokens: 10_000 }, o), false, 'too little to bother');
  });

  it('compacts and retries once on overflow, then gives up with advice', () => {
    assert.deepEqual(evaluateOverflow({ window: 32768, input: 40000 }, false), { kind: 'compact-and-retry', window: 32768, input: 40000 });
    const again = evaluateOverflow({ window: 32768, input: 33000 }, true);
    assert.equal(again.kind, 'give-up');
  });
});
