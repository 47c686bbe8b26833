/**
 * The server-sent-events parser of sse.ts over bytes, without decoding the
 * stream into text first. A streamed compaction reads some 11,000 events of
 * about 200 bytes, nearly all of them one token of text in vLLM's fixed chunk
 * shape: decoding every read into a string and cutting each payload out of it
 * was most of what reading a stream allocated. Here an event whose data is
 * one line reaches the sink as the bytes it occupies, so the reader can take
 * the token's text alone from them (plainContentBytes below) and decode the
 * rest as before. Lines end in \n, \r\n or a lone \r, a leading byte-order
 * mark is dropped (as TextDecoder drops it), and a final event without its
 * blank line still counts: the same events as SseParser over the decoded
 * text (test/fuzz/sse.fuzz.test.ts holds the two equal over any split).
 */
export interface SseSink {
  /** An event whose data is one line: buf[from, to), UTF-8, valid only during the call. */
  bytes(buf: Buffer, from: number, to: number): void;
  /** Any other event's data, decoded. */
  text(data: string): void;
}

const BOM = [0xef, 0xbb, 0xbf];
const CR = 13;
const LF = 10;

export class SseByteParser {
  /** Bytes of a line not finished by the last read (copied: a read's buffer is the stream's). */
  private rest: Buffer | null = null;
  /** The current event's data lines, decoded, when it has several or outlived its read. */
  private readonly data: string[] = [];
  /** The current event's only data line, still in the read's bytes (oneBuf null: none). */
  private oneBuf: Buffer | null = null;
  private oneFrom = 0;
  private oneTo = 0;
  private started = false;

  push(chunk: Uint8Array, sink: SseSink): void {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.rest) {
      buf = Buffer.concat([this.rest, buf]);
      this.rest = null;
    }
    if (!this.started) {
      if (buf.length < BOM.length && isPrefixOfBom(buf)) {
        this.rest = Buffer.from(buf);
        return;
      }
      this.started = true;
      if (startsWithBom(buf)) buf = buf.subarray(BOM.length);
    }
    let start = 0;
    let cr = buf.indexOf(CR);
    for (;;) {
      const nl = buf.indexOf(LF, start);
      if (cr >= 0 && cr < start) cr = buf.indexOf(CR, start);
      let end: number;
      let next: number;
      if (cr >= 0 && (nl < 0 || cr < nl)) {
        if (cr === buf.length - 1) break; // a \r\n may be split across reads
        end = cr;
        next = buf[cr + 1] === LF ? cr + 2 : cr + 1;
      } else if (nl >= 0) {
        end = nl;
        next = nl + 1;
      } else {
        break;
      }
      this.line(buf, start, end, sink);
      start = next;
    }
    if (start < buf.length) this.rest = Buffer.from(buf.subarray(start));
    // The read's bytes are not kept past it: an event still open keeps its data line as text.
    this.decodeOne();
  }

  /** Ends the stream: a final line without its end, and a final event without its blank line, still count. */
  end(sink: SseSink): void {
    const rest = this.rest;
    this.rest = null;
    // A stream of only a byte-order mark's first bytes: TextDecoder gives U+FFFD for them, which starts no field.
    if (rest && this.started) this.line(rest, 0, rest.length, sink);
    this.decodeOne();
    if (this.data.length > 0) sink.text(this.data.join('\n'));
    this.data.length = 0;
  }

  private line(buf: Buffer, start: number, end: number, sink: SseSink): void {
    if (start === end) {
      if (this.oneBuf && this.data.length === 0) {
        const b = this.oneBuf;
        this.oneBuf = null;
        sink.bytes(b, this.oneFrom, this.oneTo);
      } else {
        this.decodeOne();
        if (this.data.length > 0) sink.text(this.data.length === 1 ? this.data[0]! : this.data.join('\n'));
        this.data.length = 0;
      }
    } else if (isDataField(buf, start, end)) {
      const from = start + 5 < end && buf[start + 5] === 32 ? start + 6 : start + 5;
      if (!this.oneBuf && this.data.length === 0) {
        this.oneBuf = buf;
        this.oneFrom = from;
        this.oneTo = end;
      } else {
        this.decodeOne();
        this.data.push(buf.toString('utf8', from, end));
      }
    }
    // comments (":"), event:, id: and retry: are not used by chat completions
  }

  private decodeOne(): void {
    if (!this.oneBuf) return;
    this.data.push(this.oneBuf.toString('utf8', this.oneFrom, this.oneTo));
    this.oneBuf = null;
  }
}

/** "data:" at buf[start, end). */
function isDataField(buf: Buffer, start: number, end: number): boolean {
  return (
    end - start >= 5 &&
    buf[start] === 100 &&
    buf[start + 1] === 97 &&
    buf[start + 2] === 116 &&
    buf[start + 3] === 97 &&
    buf[start + 4] === 58
  );
}

function startsWithBom(buf: Buffer): boolean {
  return buf.length >= 3 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2];
}

function isPrefixOfBom(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) if (buf[i] !== BOM[i]) return false;
  return true;
}
