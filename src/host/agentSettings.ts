import type { AgentSettings } from '../core/agent/agentLoop';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import type { SplitpointSettings } from '../core/config/settings';
import { cappedReplyReserve, thresholdsOfWindow, type BudgetThresholds } from '../core/triggers';
import { normalizeBaseURL } from '../llm/endpoint';

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

/** Whether compaction workers run on the agent's own server, where its prefix is cached and its batch is shared. */
export function compactorOnAgentServer(s: SplitpointSettings): boolean {
  return normalizeBaseURL(s.compactor.endpoint ?? s.endpoint) === normalizeBaseURL(s.endpoint);
}

/** The budget thresholds as fractions of the whole window, where the gauges draw them. */
export function windowThresholds(s: SplitpointSettings, contextWindow: number): BudgetThresholds {
  return thresholdsOfWindow(s.thresholds, contextWindow, cappedReplyReserve(s.replyReserve, contextWindow));
}

/** The agent loop's settings from the user's settings and the resolved window. Pure. */
export function agentSettingsFrom(s: SplitpointSettings, contextWindow: number): AgentSettings {
  const models = modelChoice(s);
  return {
    contextWindow,
    replyReserve: cappedReplyReserve(s.replyReserve, contextWindow),
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
      targetFraction: windowThresholds(s, contextWindow).lo,
      // Another server has none of the agent's prefix in its cache.
      ...(compactorOnAgentServer(s) ? {} : { cache: 'cold' as const }),
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
