import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cutText, withCut } from '../../src/core/compaction/toolCuts';
import { focusSalience, focusTerms } from '../../src/core/fidelity/focusSalience';
import { conversationSalience } from '../../src/core/fidelity/salience';
import type { ChatMessage } from '../../src/core/messages';
import { DEFAULT_PRETRIM, truncateToolOutput } from '../../src/core/pretrim';
import { asst, toolPair, user } from './helpers/build';

const WORDS = ['ALPHA', 'BRAVO', 'CEDAR', 'DELTA', 'EMBER', 'FJORD', 'GAMMA', 'HAVEN'];

/** `export -p` of a service: 800 settings alike (each its own line, none more salient than the next). */
function envDump(planted: Record<number, string>): string {
  const line = (k: number) => planted[k] ?? `declare -x SVC_${WORDS[k % WORDS.length]}_${WORDS[(k >> 3) % WORDS.length]}_OPT="${k % 7}"`;
  return Array.from({ length: 800 }, (_, k) => line(k)).join('\n');
}

const FLUX = 'declare -x QUANTUM_FLUX_LIMIT="7741"';
const LEASE = 'declare -x LEASE_RENEW_WINDOW="90s"';

function conversation(output: string): ChatMessage[] {
  return [user('Print the environment of the service.'), ...toolPair('run_command', output), asst('Printed; moving on.')];
}

const lines = (text: string) => text.split('\n');

describe('focus: a compaction focus keeps the output lines that name it', () => {
  const output = envDump({ 450: FLUX, 300: LEASE });

  it('without a focus the planted settings are cut (they look like every other line), with one the named one is kept', () => {
    const ctx = conversation(output);
    const plain = cutText(ctx, 2);
    assert.match(plain, /lines cut/);
    assert.ok(!lines(plain).includes(FLUX), 'no focus: the line is cut (else the check proves nothing)');
    const focused = cutText(ctx, 2, 'what is QUANTUM_FLUX_LIMIT set to');
    assert.ok(lines(focused).includes(FLUX), 'the focus keeps QUANTUM_FLUX_LIMIT=7741');
    assert.ok(!lines(focused).includes(LEASE), 'and not a line it does not name');
    assert.ok(lines(focused).length <= lines(plain).length + 2, 'within the same budget');
  });

  it('matches the focus words whatever their case', () => {
    const ctx = conversation(output);
    assert.ok(lines(cutText(ctx, 2, 'quantum_flux_limit')).includes(FLUX));
    assert.ok(lines(cutText(ctx, 2, 'Keep the lease_renew_window value')).includes(LEASE));
  });

  it('a compaction without a focus, or with one of stop words only, gets the cut the pre-trim computes afresh', () => {
    const ctx = conversation(output);
    const fresh = truncateToolOutput(ctx[2]!, DEFAULT_PRETRIM, conversationSalience(ctx)(2)).message.content;
    cutText(ctx, 2, 'what is QUANTUM_FLUX_LIMIT set to');
    assert.equal(cutText(ctx, 2), fresh);
    assert.equal(cutText(ctx, 2, undefined), fresh);
    assert.equal(cutText(ctx, 2, '  '), fresh);
    assert.equal(cutText(ctx, 2, 'what is it set to, and why?'), fresh);
    assert.equal(cutText(conversation(output), 2), fresh, 'a new conversation with the same output (the kept cut)');
  });

  it('keeps a cut per focus: the same output in a new conversation with another focus gets its own', () => {
    const first = cutText(conversation(output), 2, 'QUANTUM_FLUX_LIMIT');
    const second = cutText(conversation(output), 2, 'LEASE_RENEW_WINDOW');
    assert.ok(lines(first).includes(FLUX) && !lines(first).includes(LEASE));
    assert.ok(lines(second).includes(LEASE) && !lines(second).includes(FLUX));
    assert.equal(cutText(conversation(output), 2, 'quantum_flux_limit?'), first, 'the same terms, the same kept cut');
    const ctx = conversation(output);
    const m = ctx[2]!;
    assert.equal(withCut(ctx, 2, m, 'QUANTUM_FLUX_LIMIT').content, first);
    assert.equal(withCut(ctx, 2, m).content, cutText(ctx, 2));
  });

  it('a focus word on every line does not crowd the errors out', () => {
    const log = Array.from({ length: 900 }, (_, k) => `  deploy step ${k} finished`);
    log[450] = 'Error: connect ECONNREFUSED 10.0.0.7:5432';
    log[460] = 'Fehler: Verbindung zu db.intern:5432 verweigert';
    const ctx = conversation(log.join('\n'));
    const cut = lines(cutText(ctx, 2, 'the deploy steps'));
    assert.ok(cut.includes(log[450]!) && cut.includes(log[460]!));
  });

  it('the cut kept for a focus is the one computed afresh for it, whatever conversations and focuses came before', () => {
    const outputs = [envDump({ 450: FLUX, 300: LEASE }), envDump({ 200: LEASE, 600: FLUX }), envDump({})];
    const focuses = [
      undefined,
      'QUANTUM_FLUX_LIMIT',
      'lease_renew_window please',
      'what is it',
      'SVC_CEDAR_DELTA_OPT and QUANTUM_FLUX_LIMIT',
    ];
    const names = ['LEASE_RENEW_WINDOW', 'SVC_CEDAR_DELTA_OPT', 'QUANTUM_FLUX_LIMIT'];
    const turn = fc.record({ out: fc.nat(outputs.length - 1), said: fc.subarray(names) });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(turn, { minLength: 1, maxLength: 4 }), fc.nat(focuses.length - 1)), { maxLength: 5 }),
        (runs) => {
          for (const [turns, f] of runs) {
            const ctx: ChatMessage[] = [user('Go.')];
            for (const t of turns)
              ctx.push(...toolPair('run_command', outputs[t.out]!), asst(t.said.length ? `About ${t.said.join(', ')}.` : 'Next.'));
            const focus = focuses[f];
            const terms = focusTerms(focus);
            const fresh = conversationSalience(ctx);
            ctx.forEach((m, i) => {
              if (m.role !== 'tool') return;
              const salience = terms ? focusSalience(terms, m.content, fresh(i)) : fresh(i);
              assert.equal(
                cutText(ctx, i, focus),
                truncateToolOutput(m, DEFAULT_PRETRIM, salience).message.content,
                `message ${i}, focus ${focus}`,
              );
            });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('takes the words of a focus that name something', () => {
    assert.deepEqual(focusTerms('what is QUANTUM_FLUX_LIMIT set to?')?.terms, ['quantum_flux_limit']);
    assert.deepEqual(focusTerms('keep the DB migration plan')?.terms, ['db', 'migration', 'plan']);
    assert.equal(focusTerms('Migration plan, DB')?.key, focusTerms('keep the db migration plan')?.key);
    assert.deepEqual(focusTerms('why does src/db/pool.ts:88 fail?')?.terms, ['fail', 'src/db/pool.ts:88']);
    assert.equal(focusTerms('what is it set to'), undefined);
    assert.equal(focusTerms(undefined), undefined);
  });
});
