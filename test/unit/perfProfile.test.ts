import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { H100_7B, UNIT_PROFILE, perfProfileSchema, stepTimeMs } from '../../src/core/perf/profile';

describe('performance profile', () => {
  const calib = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'calibration', 'h100-qwen2.5-coder-7b.json'), 'utf8'));

  it('h100-7b takes its coefficients from the calibration file', () => {
    const s = H100_7B.step;
    assert.match(calib.decode_step.fit, new RegExp(`${s.minStepMs} \\+ ${s.decodeKvMsPerKToken} \\*`));
    const mixed: string = calib.mixed_steps;
    for (const v of ['max(6.33', '3.1 + 0.0215', '1.4e-6', '0.01842']) assert.ok(mixed.includes(v), v);
    assert.equal(s.prefillBaseMs, 3.1);
    assert.equal(s.prefillMsPerToken, 0.0215);
    assert.equal(s.attentionMsPerPair, 1.4e-6);
    assert.ok(mixed.includes(String(H100_7B.maxNumBatchedTokens)));
    perfProfileSchema.parse(H100_7B);
  });

  it('reproduces the calibration examples within 10 %', () => {
    // decode: 8 seqs x 32K = 11.1 ms, 32 x 64K = 45.0 ms, 1 x 117K = 8.5 ms
    const decode = (seqs: number, kv: number) => stepTimeMs(H100_7B, { prefill: [], decodeKvTokens: seqs * kv, decodeSeqs: seqs });
    for (const [got, want] of [
      [decode(8, 32_768), 11.1],
      [decode(32, 65_536), 45.0],
      [decode(1, 117_000), 8.5],
    ] as const)
      assert.ok(Math.abs(got - want) / want < 0.1, `${got} vs ${want}`);
    // cold prefill of 8192: 229.4 ms measured
    const cold = stepTimeMs(H100_7B, { prefill: [{ newTokens: 8192, heldTokens: 0 }], decodeKvTokens: 0, decodeSeqs: 0 });
    assert.ok(Math.abs(cold - 229.4) / 229.4 < 0.1, String(cold));
  });

  it('the unit profile computes by hand', () => {
    assert.equal(stepTimeMs(UNIT_PROFILE, { prefill: [], decodeKvTokens: 2000, decodeSeqs: 2 }), 12);
    assert.equal(stepTimeMs(UNIT_PROFILE, { prefill: [{ newTokens: 1000, heldTokens: 0 }], decodeKvTokens: 0, decodeSeqs: 0 }), 10);
    assert.equal(stepTimeMs(UNIT_PROFILE, { prefill: [{ newTokens: 1000, heldTokens: 0 }], decodeKvTokens: 3000, decodeSeqs: 1 }), 13);
    assert.equal(stepTimeMs(UNIT_PROFILE, { prefill: [], decodeKvTokens: 0, decodeSeqs: 0 }), 0);
  });
});
