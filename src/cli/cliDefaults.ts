import { cappedReplyReserve, DEFAULT_THRESHOLDS, thresholdsOfWindow } from '../core/triggers';

/**
 * The tokens the CLI's agent requests ask for as max_tokens, and its splits leave for a reply: the extension's default,
 * at most half the window as the extension caps it (agentSettings.ts), so both plan one log alike.
 */
export function cliReplyReserve(contextWindow: number): number {
  return cappedReplyReserve(4096, contextWindow);
}

/**
 * lo as a fraction of the window, where the planner aims the context (CompactionSettings.targetFraction): the
 * thresholds are fractions of the prompt's room, so the CLI's compactions land where the extension's would.
 */
export function cliTargetFraction(contextWindow: number, lo = DEFAULT_THRESHOLDS.lo): number {
  return thresholdsOfWindow({ ...DEFAULT_THRESHOLDS, lo }, contextWindow, cliReplyReserve(contextWindow)).lo;
}
