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
  return streamedTokens > 0
    ? `Writing… ${streamedTokens} tokens so far`
    : 'Sent; no tokens read yet (the server may still be queueing the request or reading its prompt).';
}

/** The running agent's line while no reply text streams (the view adds how long it has waited). */
export function agentWaitText(w: Pick<AgentWaitView, 'on' | 'detail'> | null): string {
  if (!w) return 'Working…';
  switch (w.on) {
    case 'model':
      return "Waiting for the model's first tokens (the server may be queueing the request or reading the prompt)";
    case 'reasoning':
      return 'The model is reasoning';
    case 'tool':
      return `Running ${w.detail ?? 'a tool'}`;
    case 'compaction':
      return w.detail === 'background'
        ? 'Waiting for the background compaction: the context is full'
        : 'Compacting the context before the agent goes on';
  }
}
