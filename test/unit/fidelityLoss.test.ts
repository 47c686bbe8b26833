/**
 * The loss report as the compaction panel gets it: from a finished pending
 * compaction, before Adopt; and a cap that cut a fact shows up as a drop the
 * engine caused.
 */
import assert from 'node:assert/strict';
import { PendingCompaction } from '../../src/core/compaction/pendingCompaction';
import { DEFAULT_COMPACTION_SETTINGS, planCompaction } from '../../src/core/compaction/plan';
import type { CompactionSnapshot } from '../../src/core/compaction/plan';
import { compactionLoss } from '../../src/core/fidelity';
import type { StoredMessage } from '../../src/core/messages';
import { messageText } from '../../src/core/messages';
import { unlimited } from '../../src/core/ports';
import { renderPinned } from '../../src/core/session/sessionState';
import type { PinItem } from '../../src/core/session/schema';
import { splitManual } from '../../src/core/splitPoint';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { asst, sys, toolPair, user } from './helpers/build';
import { FakeModel } from './helpers/fakeModel';

const counter = new CharEstimateCounter();
const count = (m: Parameters<typeof counter.countMessage>[0]) => counter.countMessage(m);

function snapshotOf(context: StoredMessage[], split: number, pins: PinItem[] = []): CompactionSnapshot {
  return {
    context,
    tokens: context.map(count),
    split: splitManual(context, split, 'message'),
    priorDepth: 0,
    tools: [],
    strategy: 'manual',
    pins,
  };
}

describe('fidelity: the loss report before adoption', () => {
  it('names what the summaries dropped, by kind, with the message to open; pins in the pinned block are kept', async () => {
    const pins: PinItem[] = [{ id: 'p1', text: 'never push to main', kind: 'constraint', source: 'user', createdAt: 0 }];
    const head = [
      user('Use retryBudgetMs in src/net/retry.ts.'),
      asst('DECISION: we will use backoffPlanner for this.'),
      ...toolPair('run', 'LeaseLostError: the writer lost its lease'),
      asst('ok'),
    ];
    const context = [sys('s'), renderPinned(pins, 0)!, ...head, user('next task'), asst('sure')];
    // The summariser keeps the decision and the error, nothing else.
    const model = new FakeModel((req) =>
      req.messages.map(messageText).join('\n').includes('backoffPlanner')
        ? 'DECISIONS:\n- backoffPlanner\nERRORS:\n- LeaseLostError'
        : 'none',
    );
    const plan = planCompaction(snapshotOf(context, context.length - 2, pins), {
      ...DEFAULT_COMPACTION_SETTINGS,
      contextWindow: 32_768,
      streamWorkers: false,
    });
    const pending = new PendingCompaction(plan, {
      model,
      limiter: unlimited,
      count,
      clock: { now: () => 0 },
      ids: { next: (p) => `${p}1` },
    });
    await pending.start();
    const { report } = compactionLoss(pending.plan, pending.projectedContext(), { count });
    // 9 facts: an instruction, a path and an identifier in the user's line, a decision and its identifier,
    // the call's path argument, an error and its identifier, and the pin. Kept: the decision, the error and the pin.
    assert.equal(report.headline, 'dropped 4 of 9 facts: 2 paths, 1 identifier, 1 instruction');
    assert.deepEqual(
      report.facts.map((f) => [f.kind, f.key, f.messageId, f.cause]),
      [
        ['instruction', 'src/net/retry.ts', head[0]!.id, 'model'],
        ['path', 'src/net/retry.ts', head[0]!.id, 'model'],
        ['identifier', 'retryBudgetMs', head[0]!.id, 'model'],
        // The call's arguments ({"path":"src/x.ts"}) carry a path too.
        ['path', 'src/x.ts', head[2]!.id, 'model'],
      ],
    );
    assert.deepEqual(report.missingPins, []);
  });

  it('a capped copy that lost a fact is an engine drop when the original is known', () => {
    const original = toolPair(
      'run',
      ['start', ...Array.from({ length: 50 }, (_, i) => `  step ${i} done`), 'QuotaSkewError: shard drift'].join('\n'),
    );
    const capped = { ...original[1]!, id: `${original[1]!.id}~capped`, content: 'start\n[… cut …]' } as StoredMessage;
    const context = [sys('s'), user('go'), original[0]!, capped, asst('fine'), user('next'), asst('ok')];
    const plan = planCompaction(snapshotOf(context, 5), { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 32_768 });
    const withOriginals = compactionLoss(plan, [], { count, original: (id) => (id === original[1]!.id ? original[1] : undefined) });
    const lost = withOriginals.report.facts.find((f) => f.key === 'QuotaSkewError')!;
    assert.equal(lost.cause, 'engine');
    assert.equal(lost.messageId, original[1]!.id, 'the id of the stored original, not of the capped copy');
    const without = compactionLoss(plan, [], { count });
    assert.ok(!without.report.facts.some((f) => f.key === 'QuotaSkewError'), 'without the original the cut fact is invisible');
  });
});
