import assert from 'node:assert/strict';
import { JUDGE_MARKER as CORE_JUDGE } from '../../src/core/agent/judge';
import { cacheAlignedInstruction, SUMMARIZE_MARKER as CORE_SUMMARIZE } from '../../src/core/compaction/prompts';
import { detectCompaction, JUDGE_MARKER as SIM_JUDGE, SUMMARIZE_MARKER as SIM_SUMMARIZE } from '../sim';

// The simulator imports nothing from src on purpose (it stands in for a
// server); these checks keep the two sides of the contract in step.
describe('simulator ↔ engine prompt contract', () => {
  it('uses the same markers', () => {
    assert.equal(SIM_SUMMARIZE, CORE_SUMMARIZE);
    assert.equal(SIM_JUDGE, CORE_JUDGE);
  });

  it('recognises the instruction the engine writes, with its focus and verbosity', () => {
    const prefix = [
      { role: 'system' as const, content: 'sys' },
      { role: 'user' as const, content: 'Fix src/a.ts please.' },
    ];
    const instruction = cacheAlignedInstruction(prefix, 1, {
      verbosity: 'concise',
      focus: 'keep src/a.ts',
      isLastBlock: true,
      blockNumber: 1,
      blockCount: 1,
    });
    const r = detectCompaction([...prefix, { role: 'user', content: instruction }]);
    assert.ok(r);
    assert.equal(r.layout, 'cache-aligned');
    assert.equal(r.fromIndex, 1);
    assert.equal(r.focus, 'keep src/a.ts');
    assert.equal(r.verbosity, 'concise');
    assert.equal(r.wantCurrentWork, true);
  });
});
