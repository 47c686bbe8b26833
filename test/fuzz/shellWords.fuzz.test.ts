import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { isAllowlisted } from '../../src/node/tools/commandPolicy';
import { shellWords } from '../../src/node/tools/shellWords';

/**
 * The allowlist trusts shellWords to split a command as /bin/sh will. Checked
 * against sh itself: whenever shellWords returns words, sh passes the program
 * exactly those arguments; and no quoting trick makes an allowlisted prefix
 * match a command with a chaining or substitution character left unquoted.
 */
const RUNS = 150;
const SH_RUNS = 60;

/** Words quoted the way a model might write them: bare, single-quoted, double-quoted, backslashed. */
const word = fc.string({ minLength: 1, maxLength: 8 }).chain((w) =>
  fc.constantFrom(
    `'${w.replace(/'/g, `'\\''`)}'`,
    `"${w.replace(/["\\$`]/g, (c) => `\\${c}`)}"`,
    w.replace(/[^A-Za-z0-9_./=-]/g, (c) => `\\${c}`),
    w,
  ),
);
const line = fc.array(word, { minLength: 1, maxLength: 5 }).map((ws) => ws.join(' '));

describe('fuzz: shell word splitting', () => {
  it(`agrees with /bin/sh on every line it accepts (${SH_RUNS} runs)`, function () {
    if (process.platform === 'win32') this.skip();
    fc.assert(
      fc.property(line, (l) => {
        const words = shellWords(l);
        fc.pre(words !== undefined && !l.includes('\0'));
        const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${l}`], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
        if (words!.some((w) => w.glob)) return; // sh may expand the pattern; shellWords flags it instead
        const fromSh = r.stdout.split('\0').slice(0, -1);
        assert.deepEqual(
          words!.map((w) => w.text),
          fromSh,
          l,
        );
      }),
      { numRuns: SH_RUNS },
    );
  });

  it(`never throws, and never allowlists a line with an unquoted operator (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.constantFrom(';', '&&', '|', '`id`', '$(id)', '> f', '\nid'), (tail, op) => {
        const words = shellWords(tail);
        assert.ok(words === undefined || Array.isArray(words));
        assert.equal(isAllowlisted(`git status ${op}`, ['git status']), false);
        // Whatever comes before it (open quotes, backslashes, comments), an operator at the end is never waved through.
        assert.equal(isAllowlisted(`git status ${tail} ${op}`, ['git status']), false, tail);
      }),
      { numRuns: RUNS },
    );
  });
});
