/**
 * The reference the byte parser (src/llm/sseBytes.ts) is held to: a plain
 * server-sent-events parser over decoded text (TextDecoder), which the client
 * used until the stream was read in bytes. It turns text into the `data:`
 * payloads of complete events.
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
