import type { ToolCall } from '../core/messages';
import { ProtocolError } from './errors';
import type { ReplyCaps } from './replyLimits';
import { replyTooLarge } from './replyLimits';
import { usageFromRaw } from './streamAssembler';
import { parseTextToolCalls } from './textToolProtocol';
import type { AssistantMessage, ChatDelta, ChatResult, ToolProtocolMode, Usage } from './types';
import { freshId, normalizeToolCalls } from './wire';

export type Reply = Omit<ChatResult, 'attempts'>;

/** What a reply carried, however it arrived (streamed or in one body). */
export interface ReplyParts {
  content: string | null;
  toolCalls: ToolCall[];
  reasoning: string | undefined;
  usage: Usage | undefined;
  finishReason: string | null;
  model: string;
  mode: ToolProtocolMode;
}

/** The one place a ChatResult is assembled, for both the streaming and the non-streaming path. */
export function buildReply(p: ReplyParts): Reply {
  const message: AssistantMessage = { role: 'assistant', content: p.content };
  if (p.toolCalls.length > 0) message.tool_calls = p.toolCalls;
  if (p.reasoning) message.reasoning = p.reasoning;
  // Under the text protocol the server only ever says "stop"; a parsed call means the model called tools.
  const finishReason = p.mode === 'text' && p.toolCalls.length > 0 && p.finishReason === 'stop' ? 'tool_calls' : p.finishReason;
  return {
    message,
    usage: p.usage,
    finishReason,
    ...(p.reasoning ? { reasoning: p.reasoning } : {}),
    model: p.model,
    toolProtocol: p.mode,
  };
}

/** A non-streamed chat completion body → the reply, with the same deltas a stream would have emitted. */
export function replyFromBody(
  raw: unknown,
  ctx: { url: string; model: string; mode: ToolProtocolMode; caps: ReplyCaps; emit: (d: ChatDelta) => void },
): Reply {
  const o = (raw ?? {}) as {
    choices?: Array<{ message?: Record<string, unknown>; finish_reason?: string | null }>;
    usage?: Parameters<typeof usageFromRaw>[0];
    model?: string;
  };
  const choice = o.choices?.[0];
  if (!choice || !choice.message)
    throw new ProtocolError(`The response from ${ctx.url} has no choices.`, { url: ctx.url, body: raw, retryable: true });
  const m = choice.message;
  const text = typeof m.content === 'string' ? m.content : null;
  const r = m.reasoning ?? m.reasoning_content;
  const reasoning = typeof r === 'string' && r.length > 0 ? r : undefined;
  let content = text;
  let toolCalls = normalizeToolCalls(m.tool_calls, freshId);
  if ((text?.length ?? 0) + (reasoning?.length ?? 0) + toolCalls.reduce((s, c) => s + c.function.arguments.length, 0) > ctx.caps.chars) {
    throw replyTooLarge(ctx.url, ctx.caps, 'characters');
  }
  if (ctx.mode === 'text') {
    const parsed = parseTextToolCalls(text ?? '', () => freshId(0));
    content = parsed.content;
    toolCalls = parsed.toolCalls;
  }
  if (reasoning) ctx.emit({ type: 'reasoning', text: reasoning });
  if (content) ctx.emit({ type: 'content', text: content });
  toolCalls.forEach((c, i) =>
    ctx.emit({ type: 'tool_call', index: i, id: c.id, name: c.function.name, argumentsDelta: c.function.arguments }),
  );
  const finishReason = choice.finish_reason ?? null;
  return buildReply({
    content,
    toolCalls,
    reasoning,
    usage: usageFromRaw(o.usage),
    finishReason,
    model: o.model ?? ctx.model,
    mode: ctx.mode,
  });
}
