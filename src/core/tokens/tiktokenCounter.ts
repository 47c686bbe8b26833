import type { TokenCounter } from './tokenCounter';
import { countMessageWith } from './tokenCounter';
import { MemoCounter } from './memoCounter';
import type { ChatMessage } from '../messages';
import type { BpeRanks } from './bpeCounter';
import { BoundedBpeCounter } from './bpeCounter';

/**
 * js-tiktoken's cl100k_base ranks are ~1 MB of data that take a few hundred
 * milliseconds to parse, so they are loaded on first use and never on the
 * extension's activation path. The counting itself is ours (bpeCounter.ts):
 * js-tiktoken's merge is quadratic per piece. The server's own tokenizer
 * differs per model; the calibration factor (see calibration.ts) corrects for that.
 */

let loading: Promise<TokenCounter> | undefined;

/**
 * Process-wide count of tokenizer loads, on a global symbol so that a test can
 * read it across bundles (the extension bundle has its own module instances)
 * and assert that activation leaves it at 0.
 */
const LOADS = Symbol.for('splitpoint.tokenizerLoads');

export function tokenizerLoadCount(): number {
  return (globalThis as Record<symbol, number | undefined>)[LOADS] ?? 0;
}

export function loadTiktokenCounter(): Promise<TokenCounter> {
  loading ??= (async () => {
    const ranks = await import('js-tiktoken/ranks/cl100k_base');
    (globalThis as Record<symbol, number | undefined>)[LOADS] = tokenizerLoadCount() + 1;
    return new MemoCounter(
      new TiktokenCounter(await BoundedBpeCounter.load(unwrapRanks(ranks), () => new Promise((resolve) => setTimeout(resolve, 0)))),
    );
  })();
  return loading;
}

/**
 * The ranks module arrives as an ES module namespace (source, tests) or, in
 * the bundles, as a separate CommonJS file loaded with import(), which wraps
 * its exports in one more `default`. Unwrap until the ranks themselves.
 */
export function unwrapRanks(mod: unknown): BpeRanks {
  let r = mod as Record<string, unknown> | undefined;
  for (let i = 0; i < 3 && r && !('bpe_ranks' in r) && 'default' in r; i++) r = r.default as Record<string, unknown>;
  if (!r || !('bpe_ranks' in r)) throw new Error('the tokenizer data did not load (js-tiktoken ranks not found)');
  return r as unknown as BpeRanks;
}

class TiktokenCounter implements TokenCounter {
  constructor(private readonly bpe: BoundedBpeCounter) {}

  countText(text: string): number {
    // Conversation content is data: special-token look-alikes in tool output are
    // counted as ordinary text instead of throwing.
    return this.bpe.count(text);
  }

  countMessage(message: ChatMessage): number {
    return countMessageWith(this, message);
  }
}
