import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryStorage } from '../../src/core/session/memoryStorage';
import { parseLog, SessionStore } from '../../src/core/session/sessionStore';
import { counterIds, fixedClock } from '../unit/helpers/memoryStorage';

/**
 * The session parser reads files that crashes tear and users edit by hand.
 * Properties: it never throws; a valid log parses to exactly what was
 * written; any cut, flipped byte or garbage line is either read as a valid
 * prefix or refused naming a line that exists.
 */
const RUNS = 200;

type Step = { kind: 'user'; text: string } | { kind: 'tool'; text: string; calls: number } | { kind: 'reply'; text: string };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), text: fc.string({ unit: 'grapheme', maxLength: 30 }) }),
  fc.record({ kind: fc.constant('tool' as const), text: fc.string({ maxLength: 30 }), calls: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('reply' as const), text: fc.string({ maxLength: 30 }) }),
);

async function writeLog(steps: Step[]): Promise<{ text: string; messages: number }> {
  const storage = new MemoryStorage();
  const store = await SessionStore.create({ storage, ids: counterIds(), clock: fixedClock() }, '/s.jsonl', 'fuzz');
  let messages = 0;
  let n = 0;
  for (const s of steps) {
    if (s.kind === 'tool') {
      const ids = Array.from({ length: s.calls }, () => `call_${n++}`);
      await store.append({
        role: 'assistant',
        content: null,
        tool_calls: ids.map((id) => ({
          id,
          type: 'function' as const,
          function: { name: 'read_file', arguments: JSON.stringify({ path: s.text }) },
        })),
      });
      for (const id of ids) await store.append({ role: 'tool', tool_call_id: id, content: s.text });
      messages += 1 + ids.length;
    } else {
      await store.append({ role: s.kind === 'user' ? 'user' : 'assistant', content: s.text });
      messages += 1;
    }
  }
  return { text: storage.files.get('/s.jsonl')!, messages };
}

function lineCount(text: string): number {
  return text.split('\n').length;
}

function checkVerdict(text: string): ReturnType<typeof parseLog> {
  const r = parseLog(text);
  if (!r.ok) {
    assert.ok(Number.isInteger(r.line) && r.line >= 1 && r.line <= Math.max(1, lineCount(text)), `line ${r.line} of ${lineCount(text)}`);
    assert.ok(r.reason.length > 0);
  }
  return r;
}

describe('fuzz: session log parser (read-only)', () => {
  it(`a valid log parses to exactly the messages written (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 12 }), async (steps) => {
        const { text, messages } = await writeLog(steps);
        const r = parseLog(text);
        assert.ok(r.ok, r.ok ? '' : r.reason);
        assert.equal(r.state.messages.length, messages);
      }),
      { numRuns: RUNS },
    );
  });

  it(`a log cut at any byte is a valid prefix or refused at a real line (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (steps, where) => {
          const { text, messages } = await writeLog(steps);
          const cut = text.slice(0, Math.floor(where * text.length));
          const r = checkVerdict(cut);
          if (r.ok) assert.ok(r.state.messages.length <= messages);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`a flipped character or an inserted garbage line never crashes the parser (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.string({ maxLength: 3 }),
        fc.oneof(fc.string({ maxLength: 60 }), fc.json({ maxDepth: 3 })),
        async (steps, at, replacement, garbage) => {
          const { text } = await writeLog(steps);
          const i = at % text.length;
          checkVerdict(text.slice(0, i) + replacement + text.slice(i + 1));
          const lines = text.split('\n');
          lines.splice(1 + (at % (lines.length - 1)), 0, garbage);
          checkVerdict(lines.join('\n'));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`arbitrary text never crashes the parser (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (t) => void checkVerdict(t)),
      { numRuns: RUNS },
    );
  });
});
