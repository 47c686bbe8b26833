import assert from 'node:assert/strict';
import { planText } from '../../src/cli/compactCommand';
import type { PlanOption } from '../../src/core/compaction/events';

describe('compact --plan: the plan as text', () => {
  const opt = (label: string, predictedMs: number | null, excluded?: string): PlanOption => ({
    label,
    mode: 'parallel',
    layout: 'target-block',
    blockTokens: 4096,
    blocks: 3,
    concurrency: 8,
    summaryTokens: 900,
    predictedMs,
    ...(excluded ? { excluded } : {}),
  });

  it('shows each option with its predicted time, and none for one ruled out before it was simulated', () => {
    const text = planText(
      {
        chosen: opt('target-block 4096 ×3', 7670),
        alternatives: [
          opt('cache-aligned 4096 ×3', 32720, 'slows the agent 2.7× (limit 1.5×)'),
          opt('sequential cache-aligned', null, "worker 1's prompt (9504871 tokens) and reply do not fit the 131072-token window"),
        ],
        profile: { name: 'h100-7b', source: 'default' },
        cache: 'cold',
        background: false,
        replicas: 1,
        forced: [],
      },
      'default',
    );
    const lines = text.split('\n');
    assert.match(lines[1]!, /^> target-block 4096 ×3 +7\.67 s +900 tokens$/);
    assert.match(lines[2]!, /^ {2}cache-aligned 4096 ×3 +32\.72 s +900 tokens {2}\(ruled out: slows the agent/);
    assert.match(lines[3]!, /^ {2}sequential cache-aligned +— +900 tokens {2}\(ruled out: worker 1's prompt/);
    assert.doesNotMatch(text, /0\.00 s/);
  });
});
