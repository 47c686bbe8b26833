import type { ModelPort, ModelRequest, ModelResult } from '../../../src/core/ports';

/**
 * A scriptable in-process model for engine unit tests. It records every
 * request, answers with a function of the request, and can hold requests open
 * so tests can observe concurrency, cancellation and ordering. (The real
 * client over HTTP is tested against the simulator in test/integration.)
 */
export class FakeModel implements ModelPort {
  readonly requests: ModelRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  aborted = 0;
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  failNext: string[] = [];

  constructor(private readonly answer: (req: ModelRequest, n: number) => string = defaultAnswer) {}

  /** Holds every request until release() is called. */
  hold(): void {
    this.gate = new Promise((r) => (this.openGate = r));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  async chat(
    req: ModelRequest,
    opts?: { signal?: AbortSignal; onDelta?: (d: { type: 'content'; text: string }) => void },
  ): Promise<ModelResult> {
    const n = this.requests.push(req);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const abort = new Promise<never>((_, reject) => {
        const onAbort = () => {
          this.aborted++;
          reject(new Error('aborted'));
        };
        if (opts?.signal?.aborted) onAbort();
        opts?.signal?.addEventListener('abort', onAbort, { once: true });
      });
      await Promise.race([this.gate ?? Promise.resolve(), abort]);
      await Promise.race([new Promise((r) => setImmediate(r)), abort]);
      const failure = this.failNext.shift();
      if (failure) throw new Error(failure);
      const text = this.answer(req, n);
      for (let i = 0; i < text.length; i += 40) opts?.onDelta?.({ type: 'content', text: text.slice(i, i + 40) });
      return {
        message: { role: 'assistant', content: text },
        usage: { promptTokens: 1000 + n, completionTokens: Math.ceil(text.length / 4), cachedTokens: 900 },
        finishReason: 'stop',
      };
    } finally {
      this.inFlight--;
    }
  }
}

/** Names the block's instruction so tests can tell which answer is which. */
function defaultAnswer(req: ModelRequest): string {
  const last = req.messages[req.messages.length - 1]!.content ?? '';
  const from = /from message #(\d+)/.exec(last)?.[1] ?? /<TARGET_BLOCK(?:_[0-9a-f]+)?>\n\[#(\d+)/.exec(last)?.[1] ?? '?';
  const focus = /^FOCUS: (.*)$/m.exec(last)?.[1];
  return [
    'DECISIONS:',
    `- block from #${from} decided to use a streaming parser`,
    'FACTS:',
    `- src/parser/lexer.ts line ${from}`,
    'OPEN:',
    '- TODO: handle empty input',
    ...(focus ? ['CONSTRAINTS:', `- focus honoured: ${focus}`] : []),
  ].join('\n');
}
