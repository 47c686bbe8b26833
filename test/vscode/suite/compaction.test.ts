import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { join } from 'node:path';
import { api, newSession, PostLog, setSetting, suiteConfig, waitFor, commandWithArg } from './api';

describe('compaction adopted and undone', () => {
  before(async () => {
    await setSetting('splitpoint.compaction.blockTokens', 1024);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('splitpoint').update('compaction.blockTokens', undefined, vscode.ConfigurationTarget.Global);
  });

  it('/compact with a focus streams blocks, takes an edit, adopts, and undo restores the originals', async () => {
    const a = await api();
    await newSession(a);
    const file = join(suiteConfig().repoRoot, 'test', 'fixtures', 'example-session.json');
    await commandWithArg('splitpoint.importSession', vscode.Uri.file(file));
    await waitFor('the imported session', () => a.snapshot().messages.length > 50);
    const before = a.snapshot();
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'compact', focus: 'keep the parser decisions', tailStartIndex: null });
      const ready = await log.waitFor(
        'compaction',
        (m) => !!m.compaction && (m.compaction.state === 'ready' || m.compaction.state === 'adopted'),
        60_000,
      );
      const c = ready.compaction!;
      assert.equal(c.focus, 'keep the parser decisions');
      assert.ok(c.blocks.length >= 2, `expected several blocks, got ${c.blocks.length}`);
      assert.ok(
        log.of('block').some((b) => b.block.status === 'streaming' || b.block.status === 'done'),
        'blocks streamed in',
      );
      assert.equal(c.state, 'ready', 'a /compact waits for the user to adopt');
      assert.ok(
        c.blocks.every((b) => b.status === 'done' && b.summary),
        'every block has a summary',
      );
      assert.equal(a.snapshot().focus, 'keep the parser decisions', 'the focus becomes the standing focus');

      const edited = 'DECISIONS:\n- EDITED-BY-TEST: keep the Pratt parser.';
      await a.receive({ type: 'block-edit', compactionId: c.id, block: 0, text: edited });
      await log.waitFor('block', (m) => m.compactionId === c.id && m.block.index === 0 && m.block.status === 'edited');

      await a.receive({ type: 'compaction-adopt', compactionId: c.id });
      const after = await waitFor('adoption', () => (a.snapshot().compactionDepth === 1 ? a.snapshot() : undefined), 20_000);
      const summary = after.messages.find((m) => m.kind === 'summary');
      assert.ok(summary, 'the active context starts with a summary');
      assert.match(summary!.content, /EDITED-BY-TEST/);
      assert.ok(after.messages.length < before.messages.length, 'the active context is shorter');
      assert.ok(after.gauge.used < before.gauge.used, `gauge ${before.gauge.used} -> ${after.gauge.used}`);

      await vscode.commands.executeCommand('splitpoint.undoCompaction');
      const undone = await waitFor('undo', () => (a.snapshot().compactionDepth === 0 ? a.snapshot() : undefined));
      assert.equal(undone.messages.length, before.messages.length);
      assert.ok(!undone.messages.some((m) => m.kind === 'summary'));
    } finally {
      log.dispose();
    }
  });

  it('Compact Now uses the dragged split point when the view sends one', async () => {
    const a = await api();
    const s = a.snapshot();
    assert.ok(s.split.allowed.length >= 2, 'the strategy allows several split points');
    // A boundary in the middle: the first allowed one would leave nothing to compact.
    const chosen = s.split.allowed[Math.floor(s.split.allowed.length / 2)]!;
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'compact', focus: null, tailStartIndex: chosen });
      const ready = await log.waitFor('compaction', (m) => !!m.compaction && m.compaction.state === 'ready', 60_000);
      const last = ready.compaction!.blocks[ready.compaction!.blocks.length - 1]!;
      assert.ok(last.lastMessage < chosen, `the head ends before the chosen split ${chosen}`);
      await a.receive({ type: 'compaction-cancel', compactionId: ready.compaction!.id });
      await waitFor('cancel', () => a.snapshot().compaction === null || a.snapshot().compaction!.state === 'cancelled');
      assert.equal(a.snapshot().compactionDepth, 0);
    } finally {
      log.dispose();
    }
  });
});
