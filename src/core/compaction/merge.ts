import type { StoredMessage } from '../messages';
import type { Block } from './partition';

export interface MergeBlock {
  block: Block;
  text: string;
}

export const SUMMARY_HEADER = '[Splitpoint summary of earlier conversation';

/**
 * Joins block summaries in block order into the one summary message. The
 * header tells the agent the originals are archived and how to get them back.
 */
export function mergeSummaries(
  parts: readonly MergeBlock[],
  meta: {
    firstIndex: number;
    lastIndex: number;
    messageCount: number;
    focus: string | undefined;
    carried: string | undefined;
    /** How many of the messages are earlier summaries (each stands for many originals, which "1 message" hid). */
    priorSummaries?: number;
  },
): string {
  const k = meta.priorSummaries ?? 0;
  const priors = k === 0 ? '' : k === 1 ? ', one of them an earlier summary,' : `, ${k} of them earlier summaries,`;
  const lines = [
    `${SUMMARY_HEADER}: ${meta.messageCount} message${meta.messageCount === 1 ? '' : 's'} (#${meta.firstIndex}–#${meta.lastIndex})${priors} ` +
      `compacted in ${parts.length} part${parts.length === 1 ? '' : 's'}. ` +
      'The original messages are archived; call the recall tool with keywords to get their exact text.]',
  ];
  // Asked for, not verified: a block may have had nothing on it, and blocks made before a refocus did not see it.
  if (meta.focus) lines.push(`Focus requested: ${meta.focus}`);
  if (meta.carried) lines.push('', '## Earlier summary (carried over verbatim)', meta.carried.trim());
  for (const p of parts) {
    const idx = p.block.messageIndices;
    const range = p.block.part
      ? `message #${p.block.part.messageIndex}, part ${p.block.part.part + 1} of ${p.block.part.parts}`
      : p.block.isPriorSummary
        ? 'the earlier summary'
        : `messages #${idx[0]}–#${idx[idx.length - 1]}`;
    lines.push(
      '',
      parts.length > 1 ? `## Part ${p.block.index + 1} of ${parts.length} (${range})` : `## ${range}`,
      stripThinking(p.text).trim(),
    );
  }
  return lines.join('\n');
}

/** Reasoning models sometimes leave <think> blocks in content; they are not summary. */
export function stripThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/g, '').replace(/^[\s\S]*?<\/think>/, '');
}

export function summaryMessage(id: string, timestamp: number, content: string, tokens?: number): StoredMessage {
  const m: StoredMessage = { role: 'user', content, id, timestamp, kind: 'summary' };
  if (tokens !== undefined) m.tokens = tokens;
  return m;
}
