/**
 * Minimal server-sent-events parser: turns decoded text into the `data:`
 * payloads of complete events. We read the raw body ourselves (instead of the
 * SDK's Stream) so that a malformed chunk becomes a typed error rather than a
 * console message, and so that the per-chunk path stays cheap: a streamed
 * reply is hundreds of network reads, each of which passes through here.
 */
export class SseParser {
  private buf = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the payloads of the events it completed. */
  push(text: string): string[] {
    const out: string[] = [];
    this.buf += text;
    let start = 0;
    for (;;) {
      const nl = this.buf.indexOf('\n', start);
      const cr = this.buf.indexOf('\r', start);
      // Lines end in \n, \r\n or a lone \r.
      let end: number;
      let next: number;
      if (cr >= 0 && (nl < 0 || cr < nl)) {
        if (cr === this.buf.length - 1) break; // a \r\n may be split across reads
        end = cr;
        next = this.buf.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (nl >= 0) {
        end = nl;
        next = nl + 1;
      } else {
        break;
      }
      this.line(this.buf, start, end, out);
      start = next;
    }
    this.buf = start === 0 ? this.buf : this.buf.slice(start);
    return out;
  }

  /** Ends the stream: a final event without its blank line still counts. */
  end(): string[] {
    const out: string[] = [];
    if (this.buf.length > 0) this.line(this.buf, 0, this.buf.length, out);
    this.buf = '';
    if (this.data.length > 0) out.push(this.data.join('\n'));
    this.data.length = 0;
    return out;
  }

  /** One line, buf[start, end): only a data line's payload is cut out of the text (one string per event). */
  private line(buf: string, start: number, end: number, out: string[]): void {
    if (start === end) {
      if (this.data.length > 0) out.push(this.data.length === 1 ? this.data[0]! : this.data.join('\n'));
      this.data.length = 0;
    } else if (buf.startsWith('data:', start)) {
      this.data.push(buf.slice(start + 5 < end && buf.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, end));
    }
    // comments (":"), event:, id: and retry: are not used by chat completions
  }
}

/** Yields the data payloads of a byte stream of server-sent events. */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let done = false;
  try {
    while (!done) {
      const r = await reader.read();
      done = r.done;
      const events = r.done ? [...parser.push(decoder.decode()), ...parser.end()] : parser.push(decoder.decode(r.value, { stream: true }));
      for (const e of events) yield e;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
