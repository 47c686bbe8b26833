import * as assert from 'node:assert/strict';
import { api, newSession, PostLog, sim, waitFor } from './api';
import agentScript from '../fixtures/agent-script.json';

describe('a chat turn with a tool call (scripted simulator)', () => {
  it('streams, asks approval for run_command, runs it after approval, and answers', async () => {
    const a = await api();
    sim().setScript(agentScript);
    await newSession(a);
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'send', text: 'Please check the parser' });
      const req = await log.waitFor('approval-requested', undefined, 30_000);
      assert.equal(req.approval.tool, 'run_command');
      assert.equal(req.approval.command, 'node check-parser.js');
      assert.ok(!a.snapshot().messages.some((m) => m.role === 'tool'), 'nothing runs before approval');
      await a.receive({ type: 'approve', callId: req.approval.callId });
      await log.waitFor('approval-resolved', (m) => m.callId === req.approval.callId && m.approved);
      const tool = await log.waitFor('message-added', (m) => m.message.role === 'tool', 30_000);
      assert.match(tool.message.content, /parser ok: 12 rules/);
      await log.waitFor('message-added', (m) => m.message.role === 'assistant' && m.message.content.includes('binding powers'), 30_000);
      await waitFor('the agent to stop', () => !a.snapshot().agent.running);
      assert.ok(log.of('assistant-delta').length > 0, 'the reply streamed');
      const roles = a
        .snapshot()
        .messages.map((m) => m.role)
        .filter((r) => r !== 'system');
      assert.deepEqual(roles, ['user', 'assistant', 'tool', 'assistant']);
      assert.ok(a.snapshot().gauge.used > 0);
    } finally {
      log.dispose();
    }
  });

  it('a rejected tool call does not run and the agent is told', async () => {
    const a = await api();
    sim().setScript(agentScript);
    await newSession(a);
    const log = new PostLog(a);
    try {
      await a.receive({ type: 'send', text: 'Please check the parser' });
      const req = await log.waitFor('approval-requested', undefined, 30_000);
      await a.receive({ type: 'reject', callId: req.approval.callId, reason: 'not now' });
      await log.waitFor('approval-resolved', (m) => m.callId === req.approval.callId && !m.approved);
      const tool = await log.waitFor('message-added', (m) => m.message.role === 'tool', 30_000);
      assert.doesNotMatch(tool.message.content, /parser ok/);
    } finally {
      log.dispose();
    }
  });
});
