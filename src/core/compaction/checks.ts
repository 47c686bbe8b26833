import type { ChatMessage } from '../messages';
import type { PinItem } from '../session/schema';
import { summarySections } from './prompts';

/**
 * After-the-fact checks on a merged summary: the things compaction must never
 * lose. They flag; the user (or the judge, in auto mode) decides.
 */
export interface SurvivalReport {
  /** Pins whose exact text is missing from the post-compaction context. */
  missingPins: string[];
  openLoopsBefore: number;
  /** null: the summary has none of the sections asked for in English (written in another language): not counted. */
  openLoopsAfter: number | null;
  /** True when the summary lists fewer open loops than the head had. */
  openLoopsDropped: boolean;
  /** True when the summary is not smaller than the head it replaces: adopting it would grow the context. */
  grows: boolean;
}

const OPEN_LOOP_RE = /\bTODO\b|\bFIXME\b|^\s*[-*] \[ \]|\bopen question\b|\bstill (?:need|to do|failing)\b|\bnot yet\b|\bfollow[- ]up\b/gim;

/**
 * Open loops in what the user and the agent wrote (tool output is not
 * counted: a TODO in a file listing is not the agent's open work).
 */
export function countOpenLoops(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const matches = (m.content ?? '').match(OPEN_LOOP_RE);
    if (matches) n += matches.length;
  }
  return n;
}

const SECTION_NAMES: ReadonlySet<string> = new Set(summarySections(true));

/**
 * Items listed under OPEN: in a structured summary, ignoring "- none"; null when the summary has none of the sections
 * by their English names (a model that named them in the conversation's language): its open work cannot be told apart,
 * and "0, dropped!" would be untrue.
 */
export function countOpenItems(summary: string): number | null {
  let n = 0;
  let inOpen = false;
  let sections = false;
  for (const line of summary.split('\n')) {
    const header = line.match(/^\s*(?:#+\s*)?([A-Z][A-Z ]+):\s*(.*)$/);
    if (header) {
      sections ||= SECTION_NAMES.has(header[1]!.trim());
      inOpen = header[1]!.trim() === 'OPEN';
      const rest = header[2]!.trim();
      if (inOpen && rest && !/^-?\s*none\.?$/i.test(rest)) n++;
      continue;
    }
    if (inOpen && /^\s*[-*]\s+/.test(line) && !/^\s*[-*]\s+none\.?\s*$/i.test(line)) n++;
  }
  return sections ? n : null;
}

export function survivalChecks(
  head: readonly ChatMessage[],
  after: readonly ChatMessage[],
  summary: string,
  pins: readonly PinItem[],
  sizes: { headTokens: number; summaryTokens: number } = { headTokens: Infinity, summaryTokens: 0 },
): SurvivalReport {
  // The projected context is the whole window's text: joined only when there are pins to look for in it.
  const text = pins.length > 0 ? after.map((m) => m.content ?? '').join('\n') : '';
  const missingPins = pins.filter((p) => !text.includes(p.text)).map((p) => p.id);
  const before = countOpenLoops(head);
  const pinnedLoops = pins.filter((p) => p.kind === 'open-loop').length;
  const listed = countOpenItems(summary);
  const afterCount = listed === null ? null : listed + pinnedLoops;
  return {
    missingPins,
    openLoopsBefore: before,
    openLoopsAfter: afterCount,
    openLoopsDropped: afterCount !== null && afterCount < before,
    grows: sizes.summaryTokens >= sizes.headTokens,
  };
}
