import type { AgentSettings } from '../core/agent/agentLoop';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import type { SplitpointSettings } from '../core/config/settings';

/** Which model each role uses; undefined = the server's first listed model. */
export interface ModelChoice {
  agent: string | undefined;
  compactor: string | undefined;
  judge: string | undefined;
}

/**
 * The compactor defaults to the agent's model and the judge to the
 * compactor's: with the cache-aligned layout a worker only hits vLLM's prefix
 * cache when it replays the agent's exact request on the same model.
 */
export function modelChoice(s: SplitpointSettings): ModelChoice {
  const compactor = s.compactor.model ?? (s.compactor.endpoint ? undefined : s.model);
  const judge = s.judgeEndpoint.model ?? (s.judgeEndpoint.endpoint ? undefined : compactor);
  return { agent: s.model, compactor, judge };
}

/** The agent loop's settings from the user's settings and the resolved window. Pure. */
export function agentSettingsFrom(s: SplitpointSettings, contextWindow: number): AgentSettings {
  const models = modelChoice(s);
  return {
    contextWindow,
    replyReserve: Math.min(s.replyReserve, Math.floor(contextWindow / 2)),
    thresholds: { ...s.thresholds },
    strategy: s.strategy,
    compaction: {
      ...DEFAULT_COMPACTION_SETTINGS,
      mode: s.mode,
      blockTokens: s.blockTokens,
      layout: s.layout,
      verbosity: s.verbosity,
      contextWindow,
      // The summary volume is bounded so the context lands at the user's lo, as the side bar projects it.
      targetFraction: s.thresholds.lo,
      model: models.compactor,
      maxConcurrency: s.maxConcurrency,
    },
    maxAgentSlowdown: s.maxAgentSlowdown,
    asyncCompaction: s.asyncCompaction,
    judge: { enabled: s.judge.enabled, threshold: s.judge.threshold, model: models.judge },
    maxSteps: s.maxSteps,
    agentModel: models.agent,
    // 0 minutes = off: an infinite idle time never elapses.
    idle: { idleMs: s.idleMinutes > 0 ? s.idleMinutes * 60_000 : Number.POSITIVE_INFINITY, minFraction: 0.5 },
  };
}
