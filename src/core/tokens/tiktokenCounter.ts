import type { TokenCounter } from './tokenCounter';
import { countMessageWith } from './tokenCounter';
import type { ChatMessage } from '../messages';

/**
 * js-tiktoken's cl100k_base ranks are ~1 MB of data that take a few hundred
 * milliseconds to parse, so they are loaded on first use and never on the
 * extension's activation path. The server's own tokenizer differs per model;
 * the calibration factor (see calibration.ts) corrects for that.
 */
type Encoder = { encode(text: string, allowedSpecial?: 'all' | string[], disallowedSpecial?: 'all' | string[]): number[] };

let loading: Promise<TokenCounter> | undefined;

/**
 * Process-wide count of tokenizer loads, on a global symbol so that a test can
 * read it across bundles (the extension bundle has its own module instances)
 * and assert that activation leaves it at 0.
 */
const LOADS = Symbol.for('splitpoint.tokenizerLoads');

export function tokenizerLoadCount(): number {
  return ((globalThis as Record<symbol, number | undefined>)[LOADS]) ?? 0;
}

export function loadTiktokenCounter(): Promise<TokenCounter> {
  loading ??= (async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([import('js-tiktoken/lite'), import('js-tiktoken/ranks/cl100k_base')]);
    (globalThis as Record<symbol, number | undefined>)[LOADS] = tokenizerLoadCount() + 1;
    return new TiktokenCounter(new Tiktoken(ranks.default));
  })();
  return loading;
}

class TiktokenCounter implements TokenCounter {
  constructor(private readonly encoder: Encoder) {}

  countText(text: string): number {
    if (text.length === 0) return 0;
    // Conversation content is data: special-token look-alikes in tool output are
    // counted as ordinary text instead of throwing.
    return this.encoder.encode(text, [], []).length;
  }

  countMessage(message: ChatMessage): number {
    return countMessageWith(this, message);
  }
}
