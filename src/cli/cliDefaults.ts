import { DEFAULT_THRESHOLDS, thresholdsOfWindow } from '../core/triggers';

/** The tokens the CLI's agent requests ask for as max_tokens, and its splits leave for a reply: the extension's default. */
export const CLI_REPLY_RESERVE = 4096;

/**
 * lo as a fraction of the window, where the planner aims the context (CompactionSettings.targetFraction): the
 * thresholds are fractions of the prompt's room, so the CLI's compactions land where the extension's would.
 */
export function cliTargetFraction(contextWindow: number, lo = DEFAULT_THRESHOLDS.lo): number {
  return thresholdsOfWindow({ ...DEFAULT_THRESHOLDS, lo }, contextWindow, CLI_REPLY_RESERVE).lo;
}
