/**
 * API keys per role. The agent's key is the one most users need; the
 * compactor and the judge get their own only when they run on another
 * server (splitpoint.compaction.endpoint / splitpoint.judge.endpoint), and
 * fall back to the agent's otherwise. All live in VS Code's SecretStorage,
 * never in settings. No vscode import: the unit tests use it in Node.
 */
import type { SplitpointSettings } from '../core/config/settings';

export type KeyRole = 'agent' | 'compactor' | 'judge';
export type RoleKeys = Partial<Record<KeyRole, string>>;

export const KEY_ROLES: readonly KeyRole[] = ['agent', 'compactor', 'judge'];

/** The agent's secret keeps its original name, so keys stored before roles existed still work. */
export function apiKeySecret(role: KeyRole): string {
  return role === 'agent' ? 'splitpoint.apiKey' : `splitpoint.apiKey.${role}`;
}

export async function loadRoleKeys(get: (secret: string) => PromiseLike<string | undefined>): Promise<RoleKeys> {
  const out: RoleKeys = {};
  for (const r of KEY_ROLES) {
    const v = await get(apiKeySecret(r));
    if (v) out[r] = v;
  }
  return out;
}

/** The key each client uses: a role on its own server uses its own key if set, else the one it shares a server with. */
export function keysFor(s: Pick<SplitpointSettings, 'compactor' | 'judgeEndpoint'>, keys: RoleKeys): Record<KeyRole, string | undefined> {
  const agent = keys.agent;
  const compactor = s.compactor.endpoint ? (keys.compactor ?? agent) : agent;
  const judge = s.judgeEndpoint.endpoint
    ? (keys.judge ?? (s.compactor.endpoint === s.judgeEndpoint.endpoint ? compactor : agent))
    : compactor;
  return { agent, compactor, judge };
}

/** Roles that run on a server of their own, and so may need their own key. */
export function separateRoles(s: Pick<SplitpointSettings, 'compactor' | 'judgeEndpoint'>): KeyRole[] {
  return ['agent', ...(s.compactor.endpoint ? (['compactor'] as const) : []), ...(s.judgeEndpoint.endpoint ? (['judge'] as const) : [])];
}
