import type { ChatMessage, StoredMessage } from '../messages';
import type { TokenCounter } from './tokenCounter';
import { Calibration } from './calibration';

/**
 * Token counts for a session, cached per message id so adding one message to a
 * 200K-token session costs only that message's tokenisation.
 */
export class TokenLedger {
  private readonly cache = new Map<string, number>();
  readonly calibration: Calibration;

  constructor(
    private readonly counter: TokenCounter,
    calibration?: Calibration,
  ) {
    this.calibration = calibration ?? new Calibration();
  }

  /** Local estimate for one message; uses and fills the cache (and the message's own `tokens` field). */
  count(message: StoredMessage): number {
    const cached = this.cache.get(message.id);
    if (cached !== undefined) return cached;
    const n = message.tokens ?? this.counter.countMessage(message);
    this.cache.set(message.id, n);
    message.tokens = n;
    return n;
  }

  /** Local estimate for a message that is not part of the session (a prompt being built); not cached. */
  estimate(message: ChatMessage): number {
    const id = (message as Partial<StoredMessage>).id;
    return id !== undefined && this.cache.has(id) ? this.cache.get(id)! : this.counter.countMessage(message);
  }

  /** Per-message local estimates, in order. */
  countAll(messages: readonly StoredMessage[]): number[] {
    return messages.map((m) => this.count(m));
  }

  total(messages: readonly StoredMessage[]): number {
    let sum = 0;
    for (const m of messages) sum += this.count(m);
    return sum;
  }

  /** What the server would count, per the calibration factor. */
  calibrated(localTokens: number): number {
    return this.calibration.apply(localTokens);
  }

  forget(id: string): void {
    this.cache.delete(id);
  }
}
