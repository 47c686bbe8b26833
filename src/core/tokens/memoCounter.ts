import type { ChatMessage } from '../messages';
import type { TokenCounter } from './tokenCounter';
import { countMessageWith } from './tokenCounter';

/** Texts shorter than this are counted afresh: hashing one costs about what counting it does. */
const MIN_CHARS = 64;
/** Past this many characters of keys the memo starts over (its keys are mostly strings the session holds anyway). */
const MAX_CHARS = 16_000_000;

/**
 * Remembers the counts of long texts. A compaction counts the same tool
 * outputs and messages again inside each prompt it builds (pre-trimmed
 * copies, transcripts); equal texts have equal counts, so the tokenizer runs
 * once per text.
 */
export class MemoCounter implements TokenCounter {
  private readonly memo = new Map<string, number>();
  private chars = 0;
  /** Counts the times the memo started over, so a checkpoint taken before knows it is gone. */
  private generation = 0;

  constructor(private readonly inner: Pick<TokenCounter, 'countText'>) {}

  countText(text: string): number {
    if (text.length < MIN_CHARS) return this.inner.countText(text);
    const known = this.memo.get(text);
    if (known !== undefined) return known;
    const n = this.inner.countText(text);
    if (this.chars + text.length > MAX_CHARS) this.startOver();
    this.memo.set(text, n);
    this.chars += text.length;
    return n;
  }

  countMessage(message: ChatMessage): number {
    return countMessageWith(this, message);
  }

  /** A point to come back to: benchmarks that repeat one compaction must not find its texts counted already. */
  checkpoint(): MemoMark {
    return { generation: this.generation, size: this.memo.size };
  }

  /** Forgets what was remembered after the checkpoint (all of it if the memo started over since). */
  rollback(mark: MemoMark): void {
    if (mark.generation !== this.generation) return this.startOver();
    let k = 0;
    for (const [text] of this.memo) {
      if (k++ < mark.size) continue;
      this.memo.delete(text);
      this.chars -= text.length;
    }
  }

  private startOver(): void {
    this.memo.clear();
    this.chars = 0;
    this.generation++;
  }
}

export interface MemoMark {
  readonly generation: number;
  readonly size: number;
}

/** Returns a function that forgets every count `counter` remembers from now on (a no-op for counters without a memo). */
export function forgetCountsAfterNow(counter: TokenCounter): () => void {
  if (!(counter instanceof MemoCounter)) return () => undefined;
  const mark = counter.checkpoint();
  return () => counter.rollback(mark);
}
