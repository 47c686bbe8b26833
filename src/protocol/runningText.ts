/**
 * The words the views show for work still running: a compaction worker's block before its summary, and the agent's
 * line while no reply text streams.
 */
import type { AgentWaitView, BlockView } from './messages';

/** A running worker with no tokens read yet: its request is sent, and the server may still be queueing it. */
export function awaitingFirstTokens(b: Pick<BlockView, 'status' | 'streamedTokens'>): boolean {
  return b.status === 'streaming' && b.streamedTokens === 0;
}

/**
 * What a running worker's block says in place of its summary. Before the first tokens are read the request is
 * sent, not being written: the server may still be queueing it or reading its prompt (src/llm/requestTimer.ts).
 */
export function runningSummaryText(streamedTokens: number): string {
  return streamedTokens > 0 ? `Writing… ${streamedTokens} tokens so far` : `Sent; no tokens read yet (${MAY_BE_QUEUEING}).`;
}

/** Why nothing has come back yet from a request the server has accepted (src/llm/requestTimer.ts). */
const MAY_BE_QUEUEING = 'the server may be queueing the request or reading its prompt';

const BLOCK_STATUS_WORD: Record<BlockView['status'], string> = {
  queued: 'queued',
  streaming: 'writing…',
  done: 'done',
  failed: 'failed',
  edited: 'edited',
};

/** A block's status in one word, the same in the compaction panel and the review. */
export function blockStatusWord(b: Pick<BlockView, 'status' | 'streamedTokens'>): string {
  return awaitingFirstTokens(b) ? 'sent' : BLOCK_STATUS_WORD[b.status];
}

/** The running agent's line while no reply text streams (the view adds how long it has waited). */
export function agentWaitText(w: Pick<AgentWaitView, 'on' | 'detail'> | null): string {
  if (!w) return 'Working…';
  switch (w.on) {
    case 'model':
      return `Waiting for the model's first tokens (${MAY_BE_QUEUEING})`;
    case 'reasoning':
      return 'The model is reasoning';
    case 'tool':
      return `Running ${w.detail ?? 'a tool'}`;
    case 'compaction':
      switch (w.detail) {
        case 'background':
          return 'Waiting for the background compaction: the context is full';
        case 'verdict':
          return 'The judge is checking the summary made while the agent was idle against your message';
        case 'amending':
          return 'The judge asked for changes to the summary; it is rewritten before the agent answers';
        default:
          return 'Compacting the context before the agent goes on';
      }
  }
}
