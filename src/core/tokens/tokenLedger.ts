import type { ChatMessage, StoredMessage } from '../messages';
import type { ToolSpec } from '../ports';
import type { TokenCounter } from './tokenCounter';
import { Calibration } from './calibration';

/** Chars a message puts into a prompt: a fingerprint that changes when its text does. */
function size(m: ChatMessage): number {
  let n = m.content?.length ?? 0;
  if (m.role === 'assistant') for (const c of m.tool_calls ?? []) n += c.function.name.length + c.function.arguments.length;
  return n;
}

/**
 * Token counts for a session, cached per message id so adding one message to a
 * 200K-token session costs only that message's tokenisation. Stored messages
 * never change, but derived ones keep their id while their text changes (the
 * pinned block after an edit, a capped copy under a new budget), so an entry
 * is only reused while the message's size is the same.
 */
export class TokenLedger {
  private readonly cache = new Map<string, { n: number; size: number }>();
  /** The tool definitions last counted, as objects and as sent (JSON), and their count. */
  private tools: { specs: readonly ToolSpec[]; key: string; n: number } | undefined;
  readonly calibration: Calibration;

  constructor(
    private readonly counter: TokenCounter,
    calibration?: Calibration,
  ) {
    this.calibration = calibration ?? new Calibration();
  }

  /** Local estimate for one message; uses and fills the cache (and the message's own `tokens` field). */
  count(message: StoredMessage): number {
    const s = size(message);
    const cached = this.cache.get(message.id);
    if (cached !== undefined && cached.size === s) return cached.n;
    const n = message.tokens ?? this.counter.countMessage(message);
    this.cache.set(message.id, { n, size: s });
    message.tokens = n;
    return n;
  }

  /** Local estimate for a message that is not part of the session (a prompt being built); not cached. */
  estimate(message: ChatMessage): number {
    const id = (message as Partial<StoredMessage>).id;
    const cached = id === undefined ? undefined : this.cache.get(id);
    return cached !== undefined && cached.size === size(message) ? cached.n : this.counter.countMessage(message);
  }

  /** Local estimate for a bare text (a tool output before it becomes a message). */
  countText(text: string): number {
    return this.counter.countText(text);
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

  /**
   * Local estimate of the tool definitions a request sends beside its messages: the server's chat template renders
   * them into the prompt, so they count against the window, and against the calibration's ratio, like messages do.
   */
  toolTokens(specs: readonly ToolSpec[]): number {
    if (specs.length === 0) return 0;
    // The registry hands out the same spec objects each time: compared one by one, the JSON is built only on a change.
    const last = this.tools;
    if (last && last.specs.length === specs.length && last.specs.every((t, i) => t === specs[i])) return last.n;
    const key = JSON.stringify(specs);
    this.tools = { specs: [...specs], n: last?.key === key ? last.n : this.counter.countText(key), key };
    return this.tools.n;
  }

  /** What the server would count, per the calibration factor. */
  calibrated(localTokens: number): number {
    return this.calibration.apply(localTokens);
  }
}
