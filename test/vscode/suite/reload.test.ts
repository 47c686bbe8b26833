import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { api, newSession, PostLog, suiteConfig, waitFor } from './api';

// The runner loads the workbench twice: phase "main", then a reload with phase
// "after-reload". The first phase leaves a note in stateFile.
const cfg = suiteConfig();

describe('session restored after a window reload', () => {
  if (cfg.phase === 'main') {
    it('(before reload) a session with a remembered word is saved', async () => {
      const a = await api();
      const id = await newSession(a);
      const log = new PostLog(a);
      try {
        await a.receive({ type: 'send', text: 'Please remember the release codename' });
        await log.waitFor('message-added', (m) => m.message.role === 'assistant' && m.message.content.includes('pelican-42'), 30_000);
        await waitFor('the agent to stop', () => !a.snapshot().agent.running);
      } finally {
        log.dispose();
      }
      writeFileSync(cfg.stateFile, JSON.stringify({ sessionId: id, messages: a.snapshot().messages.length }));
    });
  } else {
    it('(after reload) the session is listed and reopens with its messages', async () => {
      assert.ok(existsSync(cfg.stateFile), 'the main phase left no note (did it fail?)');
      const saved = JSON.parse(readFileSync(cfg.stateFile, 'utf8')) as { sessionId: string; messages: number };
      const a = await api();
      assert.ok(
        a.snapshot().sessions.some((x) => x.id === saved.sessionId),
        'the session is listed',
      );
      // Later tests of the main phase opened other sessions; the saved one must come back whole.
      await a.receive({ type: 'switch-session', sessionId: saved.sessionId });
      const s = await waitFor('the saved session to be current', () =>
        a.snapshot().session.id === saved.sessionId ? a.snapshot() : undefined,
      );
      assert.equal(s.messages.length, saved.messages);
      assert.ok(s.messages.some((m) => m.content.includes('pelican-42')));
    });
  }
});
