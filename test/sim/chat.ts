/**
 * POST /v1/chat/completions: validation and overflow 400s as vLLM, the reply
 * (replies.ts) decoded by the step scheduler, streamed as the steps that
 * produce its tokens complete.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { SimContext } from './context';
import { describeFault, type SimFault } from './faults';
import { sendJson } from './http';
import type { Reply } from './replies';
import type { SeqHandle } from './scheduler';
import type { RequestRecord } from './stats';
import { renderTokens, type WireMessage, type WireTool } from './template';
import { errorBody, overflowMessage, TOOLS_UNSUPPORTED_MESSAGE } from './vllmErrors';

export async function handleChat(
  ctx: SimContext,
  socket: Socket,
  res: ServerResponse,
  body: Record<string, unknown>,
  fault: SimFault | undefined,
): Promise<void> {
  const { opts, model, maxModelLen, stats } = ctx;
  const id = `chatcmpl-${randomUUID().replace(/-/g, '')}`;
  const created = Math.floor(Date.now() / 1000);
  const stream = body.stream === true;
  const sched = ctx.scheduler();
  const record: RequestRecord = {
    id,
    kind: 'chat',
    stream,
    arrival: sched.clock.now(),
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    status: 'queued',
    clientClosed: false,
    ...(fault ? { fault: describeFault(fault) } : {}),
  };
  stats.requests.push(record);
  ctx.watchSocket(socket, record, res);
  ctx.setLastChatBody(body);
  const fail = (status: number, message: string, headers?: Record<string, string>) => {
    record.status = 'error';
    record.httpStatus = status;
    record.finished = sched.clock.now();
    ctx.sendError(res, status, message, headers);
  };

  if (body.model !== undefined && body.model !== model) return fail(404, `The model \`${String(body.model)}\` does not exist.`);
  const messages = body.messages as WireMessage[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return fail(400, 'messages: field required (a non-empty list)');
  const tools = (Array.isArray(body.tools) ? body.tools : []) as WireTool[];
  record.messages = messages.length;
  record.tools = tools.length;
  const toolChoice = body.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
  if (tools.length > 0 && toolChoice === 'auto' && (opts.toolParser === false || fault?.noToolParser)) {
    return fail(400, TOOLS_UNSUPPORTED_MESSAGE);
  }
  if (opts.strictHistoryArguments) {
    const bad = unparsedArguments(messages);
    if (bad !== undefined) return fail(400, bad);
  }
  const tokens = renderTokens(ctx.tokenizer, messages, tools, true);
  record.promptTokens = tokens.length;
  const maxTokensRaw = body.max_completion_tokens ?? body.max_tokens;
  const maxTokens = typeof maxTokensRaw === 'number' ? maxTokensRaw : undefined;
  if (tokens.length >= maxModelLen || (maxTokens !== undefined && tokens.length + maxTokens > maxModelLen)) {
    return fail(400, overflowMessage(opts.overflowWording ?? 'current', maxModelLen, tokens.length, maxTokens));
  }

  const reply = ctx.replier.produce(messages, tools, toolChoice, maxTokens);
  record.kind = reply.kind;
  const budget = maxTokens ?? maxModelLen - tokens.length;
  let content = fault?.content ?? reply.content;
  let toolCalls = fault?.content !== undefined ? [] : reply.toolCalls;
  let finishReason = fault?.finishReason ?? reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const reasoning = reply.reasoning;
  const reasoningTokens = reasoning ? ctx.count(reasoning) : 0;
  const callTokens = toolCalls.reduce((s, c) => s + callHeadTokens(ctx, c) + ctx.count(c.arguments), 0);
  let completionTokens = reasoningTokens + ctx.count(content) + callTokens;
  if (completionTokens > budget) {
    // Cut where max_tokens runs out, as vLLM does. A tool call in progress is streamed as far as it got, and then
    // vLLM's remaining-arguments fill closes its JSON (json.dumps of what its parser read so far: a string cut short
    // becomes a shorter string), and the reason is 'tool_calls', since a call was streamed. Unstreamed, its tool
    // parser fails on the unfinished call and no call comes back (vLLM returns the raw text as content; this drops it).
    let left = Math.max(0, budget - reasoningTokens);
    content = ctx.replier.truncateTo(content, left);
    left -= ctx.count(content);
    const cut: typeof toolCalls = [];
    for (const c of toolCalls) {
      const head = callHeadTokens(ctx, c);
      if (left <= head) break;
      left -= head;
      const args = ctx.count(c.arguments) <= left ? c.arguments : ctx.replier.truncateTo(c.arguments, left);
      left -= ctx.count(args);
      if (args === c.arguments) {
        cut.push(c);
        continue;
      }
      cut.push({ ...c, arguments: closedJson(args) ?? args });
      break;
    }
    toolCalls = stream ? cut : [];
    finishReason = stream && cut.length > 0 ? 'tool_calls' : 'length';
    // The engine wrote max_tokens tokens, whatever the pieces shown add up to.
    completionTokens = budget;
  }
  record.completionTokens = completionTokens;

  // The client going away cancels the sequence, as in vLLM.
  const gone = new AbortController();
  let serverDropped = false;
  res.on('close', () => {
    if (!res.writableFinished && !serverDropped) {
      record.clientClosed = true;
      stats.clientCloses++;
      gone.abort();
    }
  });

  const seq = sched.submit(record, tokens, completionTokens);
  // Cancel at once, not when the handler next wakes: a queued request leaves the queue now.
  gone.signal.addEventListener('abort', () => seq.cancel(serverDropped ? 'error' : 'aborted'), { once: true });
  try {
    // vLLM answers a stream's headers at once (uvicorn writes them on the response's start) and its first event with
    // the first token. Node holds written headers until the first body write, so they are flushed here.
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
    }
    if (!(await seq.tokens(1)) || gone.signal.aborted) return;
    stats.promptTokens += tokens.length;
    const usage = {
      prompt_tokens: tokens.length,
      total_tokens: tokens.length + completionTokens,
      completion_tokens: completionTokens,
      ...(opts.promptTokensDetails === false || (opts.promptTokensDetails === 'nonzero' && record.cachedTokens === 0)
        ? {}
        : { prompt_tokens_details: { cached_tokens: record.cachedTokens } }),
    };
    if (!stream) {
      if (!(await seq.tokens(completionTokens)) || gone.signal.aborted) return;
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: content === '' && toolCalls.length > 0 ? null : content,
        tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      };
      if (reasoning) message[ctx.reasoningField] = reasoning;
      stats.completionTokens += completionTokens;
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason, stop_reason: null }],
        usage,
        prompt_logprobs: null,
      });
      return;
    }
    await streamReply(ctx, res, seq, gone.signal, fault, {
      id,
      created,
      content,
      reasoning,
      toolCalls,
      finishReason,
      completionTokens,
      usage: (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage ? usage : undefined,
      onDrop: (closeSocket: boolean) => {
        serverDropped = true;
        if (closeSocket) gone.abort();
      },
    });
    if (!gone.signal.aborted && !serverDropped) stats.completionTokens += completionTokens;
  } finally {
    // The client left: abandon the response and close our half of the socket, as a real server does.
    if (gone.signal.aborted && !res.writableFinished) res.destroy();
    if (serverDropped || gone.signal.aborted) {
      seq.cancel(serverDropped ? 'error' : 'aborted');
      // Also when the last token was already out: the request did not complete for the client.
      record.status = serverDropped ? 'error' : 'aborted';
    }
  }
}

/** An unfinished JSON text closed as a partial-JSON parser would read it, when closing strings and brackets does. */
function closedJson(partial: string): string | undefined {
  const open: string[] = [];
  let inString = false;
  let escaped = false;
  for (const ch of partial) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') open.push(ch === '{' ? '}' : ']');
    else if (ch === '}' || ch === ']') open.pop();
  }
  const text = (inString ? `${escaped ? partial.slice(0, -1) : partial}"` : partial) + open.reverse().join('');
  try {
    JSON.parse(text);
    return text;
  } catch {
    return undefined;
  }
}

/**
 * vLLM releases of 2025 (chat_utils._postprocess_messages) ran json.loads on every assistant tool call's arguments in
 * the history and answered 400 with Python's error when one did not parse; later ones put {} in its place. The
 * message here is JSON.parse's, not Python's word for word.
 */
function unparsedArguments(messages: readonly WireMessage[]): string | undefined {
  for (const m of messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const c of m.tool_calls) {
      try {
        JSON.parse(c.function.arguments);
      } catch (err) {
        return `${(err as Error).message} (tool call ${c.id} in the conversation)`;
      }
    }
  }
  return undefined;
}

/** Tokens of a tool call besides its arguments (name and the parser's markup). */
function callHeadTokens(ctx: SimContext, c: Reply['toolCalls'][number]): number {
  return ctx.count(c.name) + 4;
}

interface StreamPlan {
  id: string;
  created: number;
  content: string;
  reasoning?: string;
  toolCalls: Reply['toolCalls'];
  finishReason: string;
  completionTokens: number;
  usage?: unknown;
  /** The server ends the request with a failure; closeSocket when the connection is being destroyed. */
  onDrop: (closeSocket: boolean) => void;
}

async function streamReply(
  ctx: SimContext,
  res: ServerResponse,
  seq: SeqHandle,
  signal: AbortSignal,
  fault: SimFault | undefined,
  r: StreamPlan,
): Promise<void> {
  let n = 0;
  let decoded = 0;
  const base = { id: r.id, object: 'chat.completion.chunk', created: r.created, model: ctx.model };
  /** Waits until the scheduler has produced the tokens of the next piece; false when the sequence ended early. */
  const produced = async (tokens: number) => {
    decoded += tokens;
    return (await seq.tokens(decoded)) && !signal.aborted;
  };
  /** Sends one data event; false when the stream must stop (client gone or fault). */
  const send = (payload: unknown): boolean => {
    if (signal.aborted || res.destroyed) return false;
    if (fault?.dropAfterChunks !== undefined && n >= fault.dropAfterChunks) {
      ctx.log(`sim: dropping connection after ${n} chunks`);
      r.onDrop(true);
      res.socket?.destroy();
      return false;
    }
    if (fault?.errorAfterChunks !== undefined && n >= fault.errorAfterChunks) {
      // vLLM reports an engine failure after the headers as a data event, then ends the stream.
      const status = fault.status ?? 500;
      res.write(`data: ${JSON.stringify(errorBody(fault.message ?? 'EngineCore encountered an issue.', status, ctx.errorShape))}\n\n`);
      res.end('data: [DONE]\n\n');
      r.onDrop(false);
      return false;
    }
    const text = fault?.malformedChunkAt === n ? '{"id": "broken", "choices": [' : JSON.stringify(payload);
    res.write(`data: ${text}\n\n`);
    n++;
    return true;
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }],
  });
  // A current vLLM sets token_ids on every token's chunk (null unless asked for), and exclude_unset keeps it.
  const token = (d: Record<string, unknown>) => ({
    ...base,
    choices: [{ index: 0, delta: d, logprobs: null, finish_reason: null, token_ids: null }],
  });
  if (!send(delta({ role: 'assistant', content: '' }))) return;
  for (const p of r.reasoning ? ctx.replier.pieces(r.reasoning) : []) {
    if (!(await produced(p.tokens)) || !send(token({ [ctx.reasoningField]: p.text }))) return;
  }
  for (const p of ctx.replier.pieces(r.content)) {
    if (!(await produced(p.tokens)) || !send(token({ content: p.text }))) return;
  }
  for (let i = 0; i < r.toolCalls.length; i++) {
    const c = r.toolCalls[i];
    const index = fault?.noToolIndex ? undefined : fault?.toolIndexZero ? 0 : i;
    const withIndex = (o: Record<string, unknown>) => (index === undefined ? o : { index, ...o });
    if (!(await produced(callHeadTokens(ctx, c)))) return;
    if (!send(delta({ tool_calls: [withIndex({ id: c.id, type: 'function', function: { name: c.name, arguments: '' } })] }))) return;
    for (const a of c.arguments.match(/[\s\S]{1,12}/g) ?? []) {
      if (!(await produced(ctx.count(a))) || !send(delta({ tool_calls: [withIndex({ function: { arguments: a } })] }))) return;
    }
  }
  // Piece counts may not add up to the whole reply's count: the finish event waits for the last step.
  if (!(await seq.tokens(r.completionTokens)) || signal.aborted) return;
  if (!send(delta({}, r.finishReason))) return;
  if (r.usage && !send({ ...base, choices: [], usage: r.usage })) return;
  if (signal.aborted || res.destroyed) return;
  res.end('data: [DONE]\n\n');
}
