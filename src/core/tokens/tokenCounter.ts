import type { ChatMessage } from '../messages';

/**
 * Counts tokens for prompt text. Implementations may be exact (a server's
 * /tokenize) or estimates (a local BPE); the engine only needs consistency.
 */
export interface TokenCounter {
  /** Tokens in a piece of text. */
  countText(text: string): number;
  /** Tokens a message occupies in a chat prompt, including role framing. */
  countMessage(message: ChatMessage): number;
}

/**
 * Per-message framing cost of chat templates: role markers and separators.
 * OpenAI's guidance is 3 per message plus 3 to prime the reply; chat templates
 * of open models (ChatML, Llama 3) spend 4–5. We use 4 and let calibration
 * absorb the rest.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** The crude characters/4 rule, used until the tokenizer has loaded. */
export class CharEstimateCounter implements TokenCounter {
  countText(text: string): number {
    return Math.ceil(text.length / 4);
  }
  countMessage(message: ChatMessage): number {
    return countMessageWith(this, message);
  }
}

export function countMessageWith(counter: Pick<TokenCounter, 'countText'>, m: ChatMessage): number {
  let n = MESSAGE_OVERHEAD_TOKENS;
  if (m.content) n += counter.countText(m.content);
  if (m.role === 'assistant' && m.tool_calls) {
    for (const call of m.tool_calls) {
      // name, arguments and the call framing a tool-call parser expects
      n += counter.countText(call.function.name) + counter.countText(call.function.arguments) + 6;
    }
  }
  return n;
}
