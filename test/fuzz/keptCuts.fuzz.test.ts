import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cutText } from '../../src/core/compaction/toolCuts';
import { conversationSalience } from '../../src/core/fidelity/salience';
import type { ChatMessage } from '../../src/core/messages';
import { DEFAULT_PRETRIM, truncateToolOutput } from '../../src/core/pretrim';

/**
 * A long tool output's cut is kept across conversations and reused while every "is this token mentioned later?"
 * answer its scoring asked still holds. Property: whatever conversations the same outputs appear in, one after
 * another, the cut handed out is the one computed afresh for that conversation.
 */
const NAMES = ['parseHeader', 'src/db/pool.ts', 'retryBudget', 'MAX_ROWS', 'flushQueue', '42ms', 'userCache'];

/** A log of `lines` lines, some carrying names (and so salience when the conversation mentions them later). */
function log(seed: number, lines: number): string {
  return Array.from({ length: lines }, (_, k) => {
    const n = (seed * 31 + k * 7) % 23;
    if (n < NAMES.length) return `line ${k}: touched ${NAMES[n]} again`;
    if (n === 20) return `line ${k}: Error: ${NAMES[k % NAMES.length]} failed`;
    return `line ${k}: ok`;
  }).join('\n');
}

const OUTPUTS = [log(1, 260), log(2, 420), log(3, 90), log(4, 1200)];

type Spec = { role: 'tool'; out: number } | { role: 'user' | 'assistant'; names: string[] };

const message: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ role: fc.constant('tool' as const), out: fc.integer({ min: 0, max: OUTPUTS.length - 1 }) }),
  fc.record({ role: fc.constantFrom('user' as const, 'assistant' as const), names: fc.subarray(NAMES) }),
);

function conversation(spec: fc.Arbitrary<Spec[]>) {
  return spec.map((ms): ChatMessage[] =>
    ms.map((m, k) =>
      m.role === 'tool'
        ? { role: 'tool', tool_call_id: `c${k}`, content: OUTPUTS[m.out]! }
        : { role: m.role, content: m.names.length ? `About ${m.names.join(', ')}.` : 'Go on.' },
    ),
  );
}

describe('fuzz: long tool outputs cut once and kept', () => {
  it('the kept cut is the fresh cut, conversation after conversation', () => {
    fc.assert(
      fc.property(fc.array(conversation(fc.array(message, { minLength: 1, maxLength: 10 })), { minLength: 1, maxLength: 4 }), (convs) => {
        for (const context of convs) {
          const fresh = conversationSalience(context);
          context.forEach((m, i) => {
            if (m.role !== 'tool') return;
            const expected = truncateToolOutput(m, DEFAULT_PRETRIM, fresh(i)).message.content;
            assert.equal(cutText(context, i), expected, `message ${i}`);
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a later mention of a line from the middle of a kept output brings that line into the cut', () => {
    const out = OUTPUTS[3]!;
    const tool: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: out };
    const before: ChatMessage[] = [{ role: 'user', content: 'Run it.' }, tool, { role: 'assistant', content: 'Done.' }];
    const first = cutText(before, 1);
    // A middle line that names something and is not an error (an error line is kept anyway).
    const lines = out.split('\n');
    const line = lines.find((l, k) => k > 300 && k < 900 && !l.includes('Error') && NAMES.some((n) => l.includes(n)))!;
    assert.ok(!first.includes(line), 'a plain middle line is cut');
    const name = NAMES.find((n) => line.includes(n))!;
    const after: ChatMessage[] = [...before, { role: 'user', content: `Why did ${name} change?` }];
    assert.ok(cutText(after, 1).includes(line), 'mentioned later: kept');
    assert.equal(cutText([...before], 1), first, 'and the first conversation still gets its own cut');
  });
});
