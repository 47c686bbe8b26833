/**
 * Who counts as watching the view, in the real extension host. With the side bar closed, the host stops building
 * the session's deltas and reads compaction workers' streams on the unwatched budget
 * (src/core/compaction/workerPace.ts), unless a listener that watches (the review editor, the test suite by
 * default) subscribes. A benchmark of the hidden view listens with `{ watches: false }`.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { HostToWebview } from '../../../src/protocol/messages';
import { api, newSession, waitFor } from './api';

describe('watching the view', () => {
  after(async () => {
    await vscode.commands.executeCommand('splitpoint.open');
  });

  it('with the side bar closed, a listener that does not watch gets no session deltas; one that watches brings them back', async () => {
    const a = await api();
    await newSession(a);
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    const passive: HostToWebview[] = [];
    const p = a.onDidPost((m) => passive.push(m), { watches: false });
    try {
      await a.receive({ type: 'pin', text: 'Keep the retry limit at 3.', kind: 'constraint', messageId: null });
      await waitFor('the first pin in the session', () => a.snapshot().pins.length === 1);
      assert.deepEqual(
        passive.filter((m) => m.type === 'snapshot'),
        [],
        'nobody watches: the pin changes the session without a snapshot delta',
      );
      const watching: HostToWebview[] = [];
      const w = a.onDidPost((m) => watching.push(m));
      try {
        await a.receive({ type: 'pin', text: 'Never touch the vendored parser.', kind: 'constraint', messageId: null });
        const delta = await waitFor('a snapshot delta', () => watching.find((m) => m.type === 'snapshot'));
        assert.equal(delta.type === 'snapshot' && delta.snapshot.pins.length, 2);
        assert.ok(
          passive.some((m) => m.type === 'snapshot'),
          'a listener that does not watch still sees what is posted',
        );
      } finally {
        w.dispose();
      }
      passive.length = 0;
      await a.receive({ type: 'unpin', pinId: a.snapshot().pins[0]!.id });
      await waitFor('one pin left', () => a.snapshot().pins.length === 1);
      assert.deepEqual(
        passive.filter((m) => m.type === 'snapshot'),
        [],
        'the watcher gone, deltas stop again',
      );
    } finally {
      p.dispose();
    }
  });
});
