/**
 * The common streamed chunk, one token of text, exactly as vLLM writes it:
 *   {"id":…,"object":"chat.completion.chunk","created":…,"model":…,
 *    "choices":[{"index":0,"delta":{"content":"…"},"logprobs":null,"finish_reason":null}]}
 * Parsing it whole allocates a dozen objects per token, and a compaction
 * streams thousands of tokens; here only the text is decoded. Anything else
 * (other fields in the delta or after it, several choices, a finish reason,
 * usage, an error) gives undefined, and the caller parses the chunk in full.
 */
const OPEN = '"choices":[{"index":0,"delta":{"content":"';
const CLOSE = '"},"logprobs":null,"finish_reason":null}]}';

export function plainContent(data: string): string | undefined {
  if (data.charCodeAt(0) !== 123 || !data.endsWith(CLOSE)) return undefined;
  const at = data.indexOf(OPEN);
  if (at < 0) return undefined;
  if (before(data, '"usage"', at) || before(data, '"error"', at)) return undefined;
  const from = at + OPEN.length;
  const to = data.length - CLOSE.length;
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
