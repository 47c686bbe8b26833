import type { ModelPort } from '../ports';
import type { BudgetThresholds } from '../triggers';
import type { CompactionRunnerDeps, CompactionRunnerSettings } from './compactionRunner';
import type { SpillPort } from './toolOutput';
import type { ApprovalPort, ToolRegistry } from './tools';

export interface AgentDeps extends Omit<CompactionRunnerDeps, 'emit'> {
  model: ModelPort;
  tools: ToolRegistry;
  approvals: ApprovalPort;
  spill?: SpillPort;
  /**
   * The user steers a compaction of their own (a preview waiting for Adopt): the budget trigger starts none beside it,
   * which would replace it in the view and, adopted first, make it stale.
   */
  userCompaction?: () => boolean;
}

export interface AgentSettings extends CompactionRunnerSettings {
  contextWindow: number;
  thresholds: BudgetThresholds;
  /** Compact in the background at `hi` (true) or only synchronously at `block` (false). */
  asyncCompaction: boolean;
  maxSteps: number;
  agentModel?: string | undefined;
  temperature?: number | undefined;
  idle: { idleMs: number; minFraction: number };
}

export type RunOutcome = { reason: 'answer' | 'max-steps' | 'cancelled' | 'error'; steps: number; error?: string };
