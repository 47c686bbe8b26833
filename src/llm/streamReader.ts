import { ConnectionError, errorFromStatus, type LlmError, ProtocolError, unexpectedAnswer } from './errors';
import type { Reply } from './chatResult';
import { buildReply, replyFromBody } from './chatResult';
import type { ReplyCaps } from './replyLimits';
import { replyTooLarge } from './replyLimits';
import { plainContent, plainContentBytes } from './plainContent';
import { SseByteParser, type SseSink } from './sseBytes';
import { StreamAssembler, type RawChunk } from './streamAssembler';
import { parseTextToolCalls, TextToolStreamFilter } from './textToolProtocol';
import type { ChatDelta, ToolProtocolMode } from './types';
import { freshId } from './wire';

export interface StreamContext {
  url: string;
  model: string;
  mode: ToolProtocolMode;
  caps: ReplyCaps;
  emit: (d: ChatDelta) => void;
  /**
   * The request's idle clock: told when the reply's first event arrived (comments are not events), and when a token,
   * tool-call piece or finish arrived (not for comments or empty chunks).
   */
  idle: { started(): void; progress(): void };
}

/** The response's media type, lower case, without parameters ('' when the server sent none). */
function mediaType(resp: Response): string {
  return (resp.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

const isJsonType = (type: string) => type === 'application/json' || type.endsWith('+json');

/**
 * Reads a streamed chat completion: one read loop, no async generator, so
 * each network read costs only the parse of what it carried. Stops reading,
 * and cancels the body, once the reply passes what max_tokens allows.
 * JSON (a server that ignored stream:true) is read as such. Any other body is
 * read as a stream whatever its content type says (a gateway may send
 * text/plain), and is not one if no event came (a web page: the endpoint is
 * not the OpenAI base URL).
 */
export async function readChatStream(resp: Response, ctx: StreamContext): Promise<Reply> {
  const type = mediaType(resp);
  if (isJsonType(type)) return readNotStreamed(resp, ctx, type);
  const sniff = type !== 'text/event-stream';
  if (!resp.body) throw new ProtocolError(`Empty streaming response from ${ctx.url}.`, { url: ctx.url, retryable: true });
  const state = new ChatStreamState(ctx);
  const reader = resp.body.getReader();
  const parser = new SseByteParser();
  let finished = false;
  let bytes = 0;
  // Not said to be an event stream: the start of the body, to quote if it holds no event.
  const head: Buffer[] = [];
  try {
    while (!state.sawDone) {
      const r = await reader.read();
      if (r.done) {
        finished = true;
        parser.end(state);
        break;
      }
      if (sniff && bytes < 256) head.push(Buffer.from(r.value.subarray(0, 256 - bytes)));
      bytes += r.value.byteLength;
      if (bytes > ctx.caps.bytes) throw replyTooLarge(ctx.url, ctx.caps, 'bytes');
      parser.push(r.value, state);
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  if (sniff && !state.begun) {
    throw notAStream(ctx.url, type ? `${type}, not an event stream` : 'no content type and no event', Buffer.concat(head).toString('utf8'));
  }
  return state.reply();
}

/** A streamed chat request's answer that is no reply: `what` came instead. */
function notAStream(url: string, what: string, body: string): ProtocolError {
  return unexpectedAnswer(`POST ${url}/chat/completions`, what, body, url);
}

/**
 * A streamed request's answer that is not an event stream. JSON may be an error (typed as the stream's error event
 * would be) or a whole chat completion (the reply, as if asked without streaming); anything else is not a reply.
 */
async function readNotStreamed(resp: Response, ctx: StreamContext, type: string): Promise<Reply> {
  const text = await readBodyCapped(resp, ctx);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw notAStream(ctx.url, `${type} that is not JSON`, text);
  }
  if (body !== null && typeof body === 'object') {
    const err = errorInBody(body, ctx.url);
    if (err) throw err;
    if (Array.isArray((body as { choices?: unknown }).choices)) return replyFromBody(body, ctx);
  }
  throw notAStream(ctx.url, 'JSON that is neither a chat completion nor an error', text);
}

/**
 * vLLM's error object (`{"error": {...}}` or its legacy `{"object": "error", ...}`) as a typed error; undefined if `o`
 * is not one (`"error": null` beside a reply is none).
 */
function errorInBody(o: object, url: string): LlmError | undefined {
  const chunk = o as { error?: unknown; object?: unknown; code?: unknown };
  if ((chunk.error === undefined || chunk.error === null) && chunk.object !== 'error') return undefined;
  const err = chunk.error as { code?: unknown } | null | undefined;
  const code = typeof err?.code === 'number' ? err.code : typeof chunk.code === 'number' ? chunk.code : 500;
  return errorFromStatus(code, o, undefined, url);
}

/**
 * One stream's assembly; the SSE parser's sink. The per-token path lives in methods, not in closures made per
 * request: V8 holds a closure's optimised code weakly, so each major collection after a request's closures die
 * throws it away and the next compaction compiles it again (TurboFan, on a helper thread); methods keep theirs.
 */
class ChatStreamState implements SseSink {
  sawDone = false;
  /** An event (not a comment) arrived. */
  begun = false;
  private readonly asm = new StreamAssembler(freshId);
  private readonly filter: TextToolStreamFilter | undefined;
  private chars = 0;

  constructor(private readonly ctx: StreamContext) {
    this.filter = ctx.mode === 'text' ? new TextToolStreamFilter() : undefined;
  }

  // Events after [DONE] are not read. A one-line event is tried in bytes first: most are one token of text.
  bytes(buf: Buffer, from: number, to: number): void {
    if (this.sawDone) return;
    if (!this.begun) this.begin();
    const plain = this.asm.chunks > 0 ? plainContentBytes(buf, from, to) : undefined;
    if (plain !== undefined) this.pushPlain(plain);
    else this.handle(buf.toString('utf8', from, to));
  }

  text(data: string): void {
    if (this.sawDone) return;
    if (!this.begun) this.begin();
    this.handle(data);
  }

  private begin(): void {
    this.begun = true;
    this.ctx.idle.started();
  }

  private pushPlain(plain: string): void {
    const d = this.asm.pushContent(plain);
    if (d) {
      this.ctx.idle.progress();
      this.emitOne(d);
    }
  }

  private handle(data: string): void {
    const ctx = this.ctx;
    if (data === '[DONE]' || data.trim() === '[DONE]') {
      this.sawDone = true;
      return;
    }
    // After the first chunk (which names the model), most chunks are one token of text: decode only that.
    const plain = this.asm.chunks > 0 ? plainContent(data) : undefined;
    if (plain !== undefined) return this.pushPlain(plain);
    let chunk: RawChunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ProtocolError(`Malformed stream chunk from ${ctx.url}: ${JSON.stringify(data.slice(0, 200))}`, {
        url: ctx.url,
        retryable: true,
        body: data,
      });
    }
    if (chunk === null || typeof chunk !== 'object') {
      throw new ProtocolError(`Unexpected stream chunk from ${ctx.url}: ${data.slice(0, 200)}`, { url: ctx.url, retryable: true });
    }
    // vLLM reports failures after the stream started as a data event.
    const err = errorInBody(chunk, ctx.url);
    if (err) throw err;
    const finishBefore = this.asm.finishReason;
    const deltas = this.asm.push(chunk);
    if (deltas.length > 0 || this.asm.finishReason !== finishBefore) ctx.idle.progress();
    for (const d of deltas) this.emitOne(d);
  }

  private emitOne(d: ChatDelta): void {
    const ctx = this.ctx;
    this.chars += d.type === 'tool_call' ? d.argumentsDelta.length + (d.name?.length ?? 0) : d.type === 'reset' ? 0 : d.text.length;
    if (this.chars > ctx.caps.chars) throw replyTooLarge(ctx.url, ctx.caps, 'characters');
    if (d.type === 'content' && this.filter) {
      const visible = this.filter.push(d.text);
      if (visible) ctx.emit({ type: 'content', text: visible });
    } else {
      ctx.emit(d);
    }
  }

  /** The reply, once the stream has ended. */
  reply(): Reply {
    const { asm, ctx, filter } = this;
    // Stored, an empty reply would be an assistant turn that said nothing; another attempt may say something.
    if (this.sawDone && asm.chunks === 0) {
      throw new ProtocolError(`The server at ${ctx.url} ended the stream without a reply ([DONE] came before any chunk).`, {
        url: ctx.url,
        retryable: true,
      });
    }
    if (!this.sawDone && asm.finishReason === null) {
      throw new ConnectionError(`The stream from ${ctx.url} ended before the reply was complete.`, 'ECONNRESET', {
        url: ctx.url,
        retryable: true,
      });
    }
    const reasoning = asm.reasoningText || undefined;
    const base = { reasoning, usage: asm.usage, finishReason: asm.finishReason, model: asm.model ?? ctx.model, mode: ctx.mode };
    if (filter) {
      const tail = filter.flush();
      if (tail) ctx.emit({ type: 'content', text: tail });
      const parsed = parseTextToolCalls(asm.text, () => freshId(0));
      parsed.toolCalls.forEach((c, i) =>
        ctx.emit({ type: 'tool_call', index: i, id: c.id, name: c.function.name, argumentsDelta: c.function.arguments }),
      );
      return buildReply({ ...base, content: parsed.content, toolCalls: parsed.toolCalls });
    }
    return buildReply({ ...base, content: asm.text.length > 0 ? asm.text : null, toolCalls: asm.toolCalls() });
  }
}

/** Reads a non-streamed body as text, refusing more than `maxBytes`. */
export async function readBodyCapped(resp: Response, ctx: { url: string; caps: ReplyCaps }): Promise<string> {
  if (!resp.body) return '';
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  let finished = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        finished = true;
        return text + decoder.decode();
      }
      bytes += r.value.byteLength;
      if (bytes > ctx.caps.bytes) throw replyTooLarge(ctx.url, ctx.caps, 'bytes');
      text += decoder.decode(r.value, { stream: true });
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Reads a non-streamed chat body (capped as readBodyCapped) and parses it as JSON. A body that is not JSON is a
 * retryable ProtocolError (it may have been cut off), except one said to be something else: a web page does not become
 * JSON on a retry, and says the endpoint is not the OpenAI base URL.
 */
export async function readJsonBody(resp: Response, ctx: { url: string; caps: ReplyCaps }): Promise<unknown> {
  const text = await readBodyCapped(resp, ctx);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const type = mediaType(resp);
    if (type !== '' && !isJsonType(type)) throw unexpectedAnswer(`POST ${ctx.url}/chat/completions`, `${type}, not JSON`, text, ctx.url);
    throw new ProtocolError(`The response from ${ctx.url} is not JSON: ${JSON.stringify(text.slice(0, 200))}`, {
      url: ctx.url,
      retryable: true,
      body: text,
    });
  }
}
