/**
 * Times the client's own requests for the planner's learned profile: time to
 * first token against the uncached prompt tokens, and time per output token
 * against the KV the sequence holds. It wraps any ModelPort (the VllmClient),
 * so the client itself is untouched. Only streamed replies carry a first
 * token time; others give no observation.
 */
import type { ModelDelta, ModelPort, ModelRequest, ModelResult } from '../core/ports';
import type { DecodeObservation, PrefillObservation } from '../core/perf/learn';

export interface TimingSink {
  addPrefill(o: PrefillObservation): void;
  addDecode(o: DecodeObservation): void;
}

export class TimedModel implements ModelPort {
  constructor(
    private readonly inner: ModelPort,
    private readonly sink: TimingSink,
    /** Requests running on the server besides this one, when known (from /metrics); 0 = alone. */
    private readonly others: () => number = () => 0,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async chat(req: ModelRequest, opts?: { signal?: AbortSignal; onDelta?: (d: ModelDelta) => void }): Promise<ModelResult> {
    const sent = this.now();
    let first: number | undefined;
    const result = await this.inner.chat(req, {
      ...opts,
      onDelta: (d) => {
        first ??= this.now();
        opts?.onDelta?.(d);
      },
    });
    const end = this.now();
    const u = result.usage;
    // Alone on the server, the time to first token is the prefill; with others running it is not.
    if (first !== undefined && u && this.others() === 0) {
      // A server that does not report cached tokens (vLLM without prompt-token details) gives no prefill observation:
      // counting its cache hits as fresh tokens would teach the profile impossibly fast prefills.
      if (u.cachedTokens !== undefined)
        this.sink.addPrefill({ newTokens: u.promptTokens - u.cachedTokens, cachedTokens: u.cachedTokens, ttftMs: first - sent });
      if (u.completionTokens > 8)
        this.sink.addDecode({ kvTokens: u.promptTokens + u.completionTokens / 2, tpotMs: (end - first) / (u.completionTokens - 1) });
    }
    return result;
  }
}
