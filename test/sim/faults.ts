/**
 * Fault injection, per request: from the `x-sim-fault` header, or from a
 * programmatic queue (sim.injectFault) consumed by matching requests in
 * arrival order. The header wins when both apply.
 *
 * Header forms:
 *   x-sim-fault: {"status":503,"headers":{"retry-after":"1"}}
 *   x-sim-fault: status=429; retry-after=1; drop=3; malformed=2; no-tool-index; delay=50
 *   x-sim-fault: endless | comments-only | huge-reply=10000000   (stalls and runaway replies; see stallFaults.ts)
 *   x-sim-fault: {"content":"I'm sorry, but I can't help with that.","finishReason":"stop"}   (what the model says)
 */
export interface SimFault {
  /** Which route a queued fault applies to (default 'chat'). */
  route?: 'chat' | 'tokenize' | 'models' | 'any';
  /** Queued faults: how many matching requests consume it (default 1). */
  times?: number;
  /** Answer with this HTTP status and a vLLM-shaped error body (or `body`). */
  status?: number;
  message?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this many real milliseconds before handling. */
  delayMs?: number;
  /** Never answer (until the client gives up). */
  hang?: boolean;
  /** Destroy the socket before sending anything. */
  resetBeforeResponse?: boolean;
  /** Streaming: destroy the socket after this many data events. */
  dropAfterChunks?: number;
  /** Streaming: the data event with this 0-based number is invalid JSON. */
  malformedChunkAt?: number;
  /** Streaming: after this many data events, send vLLM's in-stream error event and end the stream. */
  errorAfterChunks?: number;
  /** Behave as vLLM started without --enable-auto-tool-choice / --tool-call-parser. */
  noToolParser?: boolean;
  /** Streaming: omit `index` from tool-call deltas. */
  noToolIndex?: boolean;
  /** Streaming: send every tool call with index 0 (id on each call's first delta). */
  toolIndexZero?: boolean;
  /** /tokenize answers 404 as on a server without the route. */
  tokenize404?: boolean;
  /** Chat: stream tokens forever (a runaway server), never finishing. */
  endless?: boolean;
  /** Chat: after the headers, send only SSE keep-alive comments, forever. */
  commentsOnly?: boolean;
  /** Chat: a reply of about this many bytes of content, streamed or in one body. */
  hugeReplyBytes?: number;
  /** Chat: this text is the reply (no tool calls) instead of what the model would say: a refusal, a summary cut short. */
  content?: string;
  /** Chat: the reply ends with this finish_reason ('length': as if max_tokens had cut it); a real cut still says 'length'. */
  finishReason?: string;
}

const FLAG_KEYS: Record<string, keyof SimFault> = {
  hang: 'hang',
  reset: 'resetBeforeResponse',
  'no-tool-parser': 'noToolParser',
  'no-tool-index': 'noToolIndex',
  'tool-index-zero': 'toolIndexZero',
  'tokenize-404': 'tokenize404',
  endless: 'endless',
  'comments-only': 'commentsOnly',
};

export function parseFaultHeader(value: string | string[] | undefined): SimFault | undefined {
  if (value === undefined) return undefined;
  const v = (Array.isArray(value) ? value.join(';') : value).trim();
  if (v === '') return undefined;
  if (v.startsWith('{')) return JSON.parse(v) as SimFault;
  const f: SimFault = {};
  for (const part of v.split(/[;,]/)) {
    const [rawKey, ...rest] = part.split('=');
    const key = rawKey.trim().toLowerCase();
    const val = rest.join('=').trim();
    if (key === '') continue;
    if (key in FLAG_KEYS) {
      (f as Record<string, unknown>)[FLAG_KEYS[key]] = val === '' ? true : val !== 'false';
      continue;
    }
    switch (key) {
      case 'status':
        f.status = Number(val);
        break;
      case 'message':
        f.message = val;
        break;
      case 'delay':
        f.delayMs = Number(val);
        break;
      case 'drop':
        f.dropAfterChunks = Number(val);
        break;
      case 'malformed':
        f.malformedChunkAt = Number(val);
        break;
      case 'huge-reply':
        f.hugeReplyBytes = Number(val);
        break;
      case 'finish-reason':
        f.finishReason = val;
        break;
      case 'stream-error':
        f.errorAfterChunks = Number(val);
        break;
      case 'retry-after':
      case 'retry-after-ms':
        f.headers = { ...f.headers, [key]: val };
        break;
      default:
        throw new Error(`unknown x-sim-fault key: ${key}`);
    }
  }
  return f;
}

export class FaultQueue {
  private readonly queue: SimFault[] = [];

  push(f: SimFault): void {
    this.queue.push({ ...f, times: f.times ?? 1 });
  }

  clear(): void {
    this.queue.length = 0;
  }

  get size(): number {
    return this.queue.length;
  }

  /** Takes the first queued fault for this route. */
  take(route: 'chat' | 'tokenize' | 'models'): SimFault | undefined {
    const i = this.queue.findIndex((f) => (f.route ?? 'chat') === route || f.route === 'any');
    if (i < 0) return undefined;
    const f = this.queue[i];
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) this.queue.splice(i, 1);
    return f;
  }
}

export function describeFault(f: SimFault): string {
  return Object.entries(f)
    .filter(([k]) => k !== 'times' && k !== 'route')
    .map(([k, v]) => (v === true ? k : `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`))
    .join(';');
}
