import type { ControllerDeps } from '../../../src/host/controllerDeps';
import { MemoryLog } from '../../../src/host/log';
import type { SessionStore } from '../../../src/core/session/sessionStore';

/**
 * What a host test's SessionController leaves at its defaults: no workspace tools, an approval card with an empty
 * diff, a memory log, this one session, a good connection, a trusted workspace. A test overrides any of them after.
 */
export function controllerDefaults(
  store: SessionStore,
  session: { id: string; title: string },
): Pick<ControllerDeps, 'workspaceTools' | 'approvalPreview' | 'log' | 'sessions' | 'connection' | 'trusted' | 'setStrategy'> {
  return {
    workspaceTools: () => [],
    approvalPreview: async (call) => ({ kind: 'ask', detail: { summary: call.summary, path: 'x', diff: '' } }),
    log: new MemoryLog(),
    sessions: () => ({ session: { ...session, createdAt: 0, messageCount: store.snapshot.messages.length }, sessions: [] }),
    connection: () => ({ state: 'ok', message: null }),
    trusted: () => true,
    setStrategy: () => undefined,
  };
}
