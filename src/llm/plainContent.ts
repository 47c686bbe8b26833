/**
 * The common streamed chunk, one token of text, exactly as vLLM writes it:
 *   {"id":…,"object":"chat.completion.chunk","created":…,"model":…,
 *    "choices":[{"index":0,"delta":{"content":"…"},"logprobs":null,"finish_reason":null,"token_ids":null}]}
 * (a current vLLM: `token_ids` is set explicitly, so `exclude_unset` keeps it; servers of the reasoning_content →
 * reasoning rename also write `"reasoning_content":null` in the delta; older ones neither). Parsing it whole
 * allocates a dozen objects per token, and a compaction streams thousands of tokens; here only the text is decoded.
 * Anything else (other fields in the delta or after it, several choices, a finish reason, usage, an error) gives
 * undefined, and the caller parses the chunk in full.
 */
const OPEN = '"choices":[{"index":0,"delta":{"content":"';
/** What may follow the content's text, the newest vLLM's first. */
const CLOSES = [
  '"},"logprobs":null,"finish_reason":null,"token_ids":null}]}',
  '","reasoning_content":null},"logprobs":null,"finish_reason":null,"token_ids":null}]}',
  '"},"logprobs":null,"finish_reason":null}]}',
  '","reasoning_content":null},"logprobs":null,"finish_reason":null}]}',
];

/** The close a chunk ends with, if any of CLOSES. */
function closeOf(data: string): string | undefined {
  for (const c of CLOSES) if (data.endsWith(c)) return c;
  return undefined;
}

export function plainContent(data: string): string | undefined {
  if (data.charCodeAt(0) !== 123) return undefined;
  const close = closeOf(data);
  if (close === undefined) return undefined;
  const at = data.indexOf(OPEN);
  if (at < 0) return undefined;
  if (before(data, '"usage"', at) || before(data, '"error"', at)) return undefined;
  const from = at + OPEN.length;
  const to = data.length - close.length;
  if (to < from) return undefined;
  const raw = data.slice(from, to);
  // Most tokens are plain text: without a backslash, a quote or a control character the literal is its own value.
  if (isPlainLiteral(raw)) return raw;
  // Otherwise one JSON string literal from the opening quote to the closing one; an unescaped quote inside
  // (a second choice, another field) makes it fail to parse, and the chunk goes the long way.
  let text: unknown;
  try {
    text = JSON.parse(data.slice(from - 1, to + 1));
  } catch {
    return undefined;
  }
  return typeof text === 'string' ? text : undefined;
}

/** No quote, backslash or control character: the JSON string literal's value is its text. */
function isPlainLiteral(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 32 || c === 34 || c === 92) return false;
  }
  return true;
}

/** Whether `needle` occurs wholly within data[0, end). */
function before(data: string, needle: string, end: number): boolean {
  return end >= needle.length && data.lastIndexOf(needle, end - needle.length) >= 0;
}

const OPEN_BYTES = Buffer.from(OPEN);
const CLOSES_BYTES = CLOSES.map((c) => Buffer.from(c));

/** The close buf[from, to) ends with, if any of CLOSES. */
function closeBytesOf(buf: Buffer, from: number, to: number): Buffer | undefined {
  for (const c of CLOSES_BYTES) if (to - from >= c.length && c.compare(buf, to - c.length, to) === 0) return c;
  return undefined;
}

/**
 * Where a needle next occurs in a read's buffer, looked up once and reused while the events before it are handled:
 * events come in order within a read, so each buffer is searched once, whatever its size.
 */
class NextOccurrence {
  private readonly needle: Buffer;
  private buf: Buffer | null = null;
  private at = -1;

  constructor(needle: string) {
    this.needle = Buffer.from(needle);
  }

  /** Whether the needle occurs wholly within buf[from, end); `from` must not go back within one buffer. */
  within(buf: Buffer, from: number, end: number): boolean {
    if (buf !== this.buf || (this.at >= 0 && this.at < from)) {
      this.buf = buf;
      this.at = buf.indexOf(this.needle, from);
    }
    return this.at >= 0 && this.at + this.needle.length <= end;
  }
}

const USAGE = new NextOccurrence('"usage"');
const ERROR = new NextOccurrence('"error"');

/**
 * plainContent over a data line still in bytes, buf[from, to): the token's text decoded alone, or undefined where
 * plainContent might answer otherwise (the caller then decodes the line and asks it). Only plain literals are
 * taken here (no quote, backslash or control byte; UTF-8's other bytes are all above 127), so the ASCII frame is
 * found byte for byte where the text would find it.
 */
export function plainContentBytes(buf: Buffer, from: number, to: number): string | undefined {
  if (buf[from] !== 123) return undefined;
  const close = closeBytesOf(buf, from, to);
  if (!close || to - from < OPEN_BYTES.length + close.length + 1) return undefined;
  const end = to - close.length;
  // The literal runs back from the closing frame to its opening quote.
  let start = end;
  for (; start > from; start--) {
    const c = buf[start - 1]!;
    if (c === 34) break;
    if (c < 32 || c === 92) return undefined;
  }
  const open = start - OPEN_BYTES.length;
  if (open <= from || OPEN_BYTES.compare(buf, open, start) !== 0) return undefined;
  // plainContent reads the first OPEN and declines when "usage" or "error" comes before it.
  if (buf.indexOf(OPEN_BYTES, from) !== open) return undefined;
  if (USAGE.within(buf, from, open) || ERROR.within(buf, from, open)) return undefined;
  return buf.toString('utf8', start, end);
}
