import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PIN_KINDS, STRATEGY_NAMES } from '../../src/core/vocabulary';
import type { WebviewToHost } from '../../src/protocol/messages';
import { isWebviewToHost, WEBVIEW_TO_HOST_TYPES } from '../../src/protocol/validate';

/**
 * The host↔webview validator is the boundary a compromised webview would
 * attack: whatever is posted, it answers true or false and never throws, and
 * it accepts exactly the shapes the protocol declares.
 */
const RUNS = 400;
const text = fc.string({ maxLength: 40 });
const int = fc.integer({ min: -5, max: 1000 });
const strOrNull = fc.option(text, { nil: null });

/** One generator per message type: a valid message of that type (keyed by the union, so a new type without one does not compile). */
const VALID: { [K in WebviewToHost['type']]: fc.Arbitrary<Record<string, unknown>> } = {
  ready: fc.constant({}),
  visible: fc.constant({}),
  stop: fc.constant({}),
  undo: fc.constant({}),
  'clear-focus': fc.constant({}),
  'new-session': fc.constant({}),
  send: fc.record({ text }),
  compact: fc.record({ focus: strOrNull, tailStartIndex: fc.option(int, { nil: null }) }),
  'set-strategy': fc.record({ strategy: fc.constantFrom(...STRATEGY_NAMES) }),
  'block-edit': fc.record({ compactionId: text, block: int, text }),
  'block-regenerate': fc.record({ compactionId: text, block: int }),
  'compaction-adopt': fc.record({ compactionId: text }),
  'compaction-cancel': fc.record({ compactionId: text }),
  approve: fc.record({ callId: text }),
  reject: fc.record({ callId: text, reason: strOrNull }),
  pin: fc.record({ text, kind: fc.constantFrom(...PIN_KINDS), messageId: strOrNull }),
  unpin: fc.record({ pinId: text }),
  'edit-pin': fc.record({ pinId: text, text }),
  'expand-summary': fc.record({ summaryId: text }),
  'switch-session': fc.record({ sessionId: text }),
  'open-review': fc.constant({}),
};

const validMessage = fc.constantFrom(...WEBVIEW_TO_HOST_TYPES).chain((type) => VALID[type]!.map((fields) => ({ type, ...fields })));

describe('fuzz: host↔webview protocol validator', () => {
  it('has a generator for every message type', () => {
    assert.deepEqual(Object.keys(VALID).sort(), [...WEBVIEW_TO_HOST_TYPES].sort());
  });

  it(`never throws on arbitrary values (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (x) => typeof isWebviewToHost(x) === 'boolean'),
      { numRuns: RUNS },
    );
  });

  it(`never throws when a known type carries arbitrary fields (${RUNS} runs)`, () => {
    const msg = fc
      .tuple(fc.constantFrom(...WEBVIEW_TO_HOST_TYPES), fc.dictionary(fc.string({ maxLength: 12 }), fc.anything()))
      .map(([type, f]) => ({ ...f, type }));
    fc.assert(
      fc.property(msg, (m) => typeof isWebviewToHost(m) === 'boolean'),
      { numRuns: RUNS },
    );
  });

  it(`accepts every well-formed message (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(validMessage, (m) => isWebviewToHost(m)),
      { numRuns: RUNS },
    );
  });

  it(`rejects a well-formed message with a required field removed or retyped (${RUNS} runs)`, () => {
    const broken = validMessage
      .filter((m) => Object.keys(m).length > 1)
      .chain((m) =>
        fc.tuple(
          fc.constant(m),
          fc.constantFrom(...Object.keys(m).filter((k) => k !== 'type')),
          fc.constantFrom<unknown>(undefined, 1.5, {}, [], true, 'not-a-kind'),
        ),
      );
    fc.assert(
      fc.property(broken, ([m, key, value]) => {
        // Any string is valid in a string or nullable-string field; only the enumerations refuse one.
        if (typeof value === 'string' && !['strategy', 'kind', 'block', 'tailStartIndex'].includes(key)) return true;
        const copy: Record<string, unknown> = { ...m };
        if (value === undefined) delete copy[key];
        else copy[key] = value;
        return !isWebviewToHost(copy);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects prototype keys and unknown types', () => {
    for (const type of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'READY', ''])
      assert.equal(isWebviewToHost({ type }), false, type);
  });
});
