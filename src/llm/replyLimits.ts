import { ProtocolError } from './errors';

/**
 * How much of a reply the client will read. A reply cannot legitimately be
 * longer than max_tokens allows, so anything far beyond that is a broken or
 * hostile server, and reading on would only fill memory and the session log
 * (a 10 MB reply used to be stored whole). The bounds are generous: 32
 * characters per token is several times the longest tokens real vocabularies
 * have, and the raw-byte bound leaves room for SSE framing (about 200 bytes of
 * JSON envelope per streamed token).
 */
export const ASSUMED_MAX_TOKENS = 32_768;
const CHARS_PER_TOKEN = 32;
const BYTES_PER_TOKEN = 512;

export interface ReplyCaps {
  /** Characters of content, reasoning and tool arguments together. */
  chars: number;
  /** Raw bytes of the HTTP body. */
  bytes: number;
  maxTokens: number;
}

export function replyCaps(maxTokens: number | undefined): ReplyCaps {
  const t = maxTokens !== undefined && maxTokens > 0 ? maxTokens : ASSUMED_MAX_TOKENS;
  return { chars: t * CHARS_PER_TOKEN + 16_384, bytes: t * BYTES_PER_TOKEN + 1_048_576, maxTokens: t };
}

export function replyTooLarge(url: string, caps: ReplyCaps, what: 'characters' | 'bytes'): ProtocolError {
  const limit = what === 'characters' ? caps.chars : caps.bytes;
  return new ProtocolError(
    `The reply from ${url} passed ${limit} ${what}, far more than max_tokens ${caps.maxTokens} can produce; it was cut off and not stored. ` +
      'The server may be misbehaving.',
    { url, retryable: false },
  );
}
