/**
 * Times the client's own requests for the planner's learned profile: time to
 * first token against the uncached prompt tokens, and time per output token
 * against the KV the sequence holds. It wraps any ModelPort (the VllmClient),
 * so the client itself is untouched. Only streamed replies carry a first
 * token time; others give no observation.
 *
 * The times come from the paced transport (pacedFetch.ts watchArrivals), which
 * notes when the reply's bytes reached the socket: the deltas reach us in its
 * batches, up to one interval (100 ms) late, and their times would teach the
 * profile a prefill of at least that. Over another transport, which hands each
 * read on as it comes, the deltas' own times are used.
 */
import type { ModelDelta, ModelPort, ModelRequest, ModelResult } from '../core/ports';
import type { DecodeObservation, PrefillObservation } from '../core/perf/learn';
import { watchArrivals, type Arrival, type StreamArrivals } from './pacedFetch';

export interface TimingSink {
  addPrefill(o: PrefillObservation): void;
  addDecode(o: DecodeObservation): void;
}

/** Who else uses the server. */
export interface Neighbours {
  /** Their requests running now (from /metrics, or our own other clients); 0 = none seen. */
  running(): number;
  /** How many of theirs have started so far, a count that only grows: one that began and ended within ours changes it. */
  started?(): number;
}

/**
 * How uncertain a time may be, as a share of the span it measures. Beyond it the sample goes: a decode that ended
 * while the transport held the socket is known only to within the hold (~100 ms), too coarse for a short reply.
 */
const MAX_UNCERTAINTY = 0.1;

// Where in a hold the bytes came is as likely one moment as another: its middle is right on average.
const mid = (a: Arrival) => (a.earliest + a.latest) / 2;
const halfWidth = (a: Arrival) => (a.latest - a.earliest) / 2;

export class TimedModel implements ModelPort {
  private readonly neighbours: Neighbours;

  constructor(
    private readonly inner: ModelPort,
    private readonly sink: TimingSink,
    /** Requests running on the server besides this one, when known; 0 = alone. */
    others: (() => number) | Neighbours = () => 0,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.neighbours = typeof others === 'function' ? { running: others } : others;
  }

  async chat(req: ModelRequest, opts?: { signal?: AbortSignal; onDelta?: (d: ModelDelta) => void }): Promise<ModelResult> {
    const alone = new AloneCheck(this.neighbours);
    const watch = watchArrivals();
    const sent = this.now();
    let first: number | undefined;
    let reset = false;
    let result: ModelResult;
    try {
      result = await this.inner.chat(
        { ...req, headers: { ...req.headers, ...watch.header } },
        {
          ...opts,
          onDelta: (d) => {
            if (d.type === 'reset') reset = true;
            else first ??= this.now();
            alone.look();
            opts?.onDelta?.(d);
          },
        },
      );
    } finally {
      watch.stop();
    }
    const end = this.now();
    alone.look();
    const attempts = (result as { attempts?: number }).attempts ?? 1;
    // A retried request's first token came after a failed attempt and the backoff: its times are not the server's.
    if (req.stream === false || reset || attempts > 1 || watch.arrivals.requests > 1 || !alone.alone) return result;
    const times = watch.arrivals.requests === 1 ? fromTransport(watch.arrivals) : fromDeltas(sent, first, end);
    if (times) this.observe(result, times);
    return result;
  }

  private observe(result: ModelResult, t: Times): void {
    const u = result.usage;
    if (!u) return;
    const ttft = mid(t.first) - t.sent;
    // A server that does not report cached tokens (vLLM without prompt-token details) gives no prefill observation:
    // counting its cache hits as fresh tokens would teach the profile impossibly fast prefills.
    if (u.cachedTokens !== undefined && ttft > 0 && halfWidth(t.first) <= MAX_UNCERTAINTY * ttft)
      this.sink.addPrefill({ newTokens: u.promptTokens - u.cachedTokens, cachedTokens: u.cachedTokens, ttftMs: ttft });
    const span = mid(t.end) - mid(t.first);
    if (u.completionTokens > 8 && span > 0 && halfWidth(t.first) + halfWidth(t.end) <= MAX_UNCERTAINTY * span)
      this.sink.addDecode({ kvTokens: u.promptTokens + u.completionTokens / 2, tpotMs: span / (u.completionTokens - 1) });
  }
}

interface Times {
  sent: number;
  first: Arrival;
  end: Arrival;
}

function fromTransport(a: StreamArrivals): Times | undefined {
  return a.sent !== undefined && a.first && a.end ? { sent: a.sent, first: a.first, end: a.end } : undefined;
}

/** A transport that hands each read on as it comes: the deltas' times are the bytes'. */
function fromDeltas(sent: number, first: number | undefined, end: number): Times | undefined {
  return first === undefined ? undefined : { sent, first: { earliest: first, latest: first }, end: { earliest: end, latest: end } };
}

/**
 * Whether anyone else ran on the server at any time during the request: looked at when it is sent, at each batch of
 * deltas (the first token's among them) and at the end, and, where the count of started requests is known, whether
 * one started in between (a worker or judge call that began and ended between two looks).
 */
class AloneCheck {
  alone: boolean;
  private readonly started: number | undefined;

  constructor(private readonly n: Neighbours) {
    this.started = n.started?.();
    this.alone = n.running() === 0;
  }

  look(): void {
    if (!this.alone) return;
    this.alone = this.n.running() === 0 && this.n.started?.() === this.started;
  }
}
