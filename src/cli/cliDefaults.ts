import { cappedReplyReserve, DEFAULT_THRESHOLDS, thresholdsOfWindow } from '../core/triggers';

/**
 * The tokens the CLI's agent requests ask for as max_tokens, and its splits leave for a reply: the extension's default,
 * at most half the window as the extension caps it (agentSettings.ts), so both plan one log alike.
 */
/** The reply reserve the CLI asks for before the window's cap (cliReplyReserve). */
export const CLI_REPLY_RESERVE = 4096;

export function cliReplyReserve(contextWindow: number): number {
  return cappedReplyReserve(CLI_REPLY_RESERVE, contextWindow);
}

/**
 * lo as a fraction of the window, where the planner aims the context (CompactionSettings.targetFraction): the
 * thresholds are fractions of the prompt's room, so the CLI's compactions land where the extension's would.
 */
export function cliTargetFraction(contextWindow: number, lo = DEFAULT_THRESHOLDS.lo): number {
  return thresholdsOfWindow({ ...DEFAULT_THRESHOLDS, lo }, contextWindow, cliReplyReserve(contextWindow)).lo;
}
