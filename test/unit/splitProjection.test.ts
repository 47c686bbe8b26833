/**
 * The side bar projects a compaction from the split handle without asking the host: the head it counts must be the
 * head the core would compact, for the strategy's own split and for a handle moved by hand (a manual split).
 */
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { planSplit, type StrategyName } from '../../src/core/splitPoint';
import type { SplitView, ViewMessage } from '../../src/protocol/messages';
import { buildPrefix, project } from '../../webview/projection';

const msgs: [ChatMessage, number][] = [
  [{ role: 'system', content: 'You are a coding agent.' }, 100],
  [{ role: 'user', content: 'Fix the retry bug.' }, 10],
  [{ role: 'assistant', content: 'Reading the code…' }, 5000],
  [{ role: 'user', content: 'Also keep maxRetries at 5.' }, 10],
  [{ role: 'assistant', content: 'Patched.' }, 8000],
  [{ role: 'user', content: 'Run the tests.' }, 10],
  [{ role: 'assistant', content: 'All green.' }, 3000],
];
const messages = msgs.map(([m]) => m);
const tokens = msgs.map(([, t]) => t);
const views: ViewMessage[] = msgs.map(([m], index) => ({
  id: `m${index}`,
  index,
  role: m.role,
  kind: 'normal',
  origin: 'tail',
  tokens: tokens[index]!,
  content: m.content ?? '',
  truncated: false,
}));
const gauge = { used: tokens.reduce((a, b) => a + b, 0), window: 131_072, hi: 0.75, lo: 0.3, block: 0.9 };

function view(strategy: StrategyName): SplitView {
  const { split, allowed, frameEnd } = planSplit({ messages, tokens }, { strategy }, 131_072, 4096);
  return {
    strategy,
    tailStartIndex: split.tailStartIndex,
    keptIndices: split.keptIndices,
    allowed,
    frameEnd,
    version: 'v',
    summaryTokensPerBlock: 300,
    blockTokens: 4096,
  };
}

/** Tokens of the messages the core's split would summarise. */
function coreHead(choice: Parameters<typeof planSplit>[1]): number {
  return planSplit({ messages, tokens }, choice, 131_072, 4096).split.headIndices.reduce((s, i) => s + tokens[i]!, 0);
}

describe('webview projection: the head it counts is the core split', () => {
  for (const strategy of ['user-messages', 'token-fraction', 'recent-turns'] as const) {
    it(`${strategy}: at the strategy's own split, and at every position the handle can be moved to`, () => {
      const split = view(strategy);
      const prefix = buildPrefix(views, split);
      const atChoice = project(prefix, gauge, split, split.tailStartIndex);
      assert.equal(atChoice.headTokens, coreHead({ strategy }), 'the strategy split');
      for (const t of split.allowed.filter((a) => a !== split.tailStartIndex)) {
        assert.equal(project(prefix, gauge, split, t).headTokens, coreHead({ manualIndex: t }), `moved to ${t}`);
      }
    });
  }

  it('preserving user messages, the head is every agent message after the frame: 16,000 of the 16,030 tokens', () => {
    const split = view('user-messages');
    assert.deepEqual([split.tailStartIndex, split.keptIndices], [1, [1, 3, 5]]);
    const p = project(buildPrefix(views, split), gauge, split, split.tailStartIndex);
    assert.equal(p.headTokens, 16_000);
    assert.equal(p.blocks, 4);
  });
});
