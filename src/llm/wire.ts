/**
 * The request and response wire shapes: clean outgoing messages, build the
 * chat body (native tools or the text protocol), normalise incoming tool calls.
 */
import type { ChatMessage, ToolCall } from '../core/messages';
import { toTextProtocolMessages } from './textToolProtocol';
import type { ChatRequest, ToolProtocolMode } from './types';

type AssistantWire = { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] };

/**
 * A call's arguments as the server must get them back: a JSON object. A reply cut by max_tokens in a call can keep
 * unfinished text in the session (nothing is lost; the call was not run, and the model was told why), but vLLM's 2025
 * releases json.loads every call in the history and answer 400, so every later turn and every compaction worker that
 * replays the conversation would fail. Such arguments go as {}, what later releases substitute themselves. Parsed once
 * per call: the stored calls are the same objects request after request.
 */
function wireArguments(c: ToolCall): string {
  let ok = parsedOnce.get(c);
  if (ok === undefined) {
    try {
      const v: unknown = JSON.parse(c.function.arguments);
      // An object: 2025 releases also pass the value to the chat template, which iterates its items.
      ok = v !== null && typeof v === 'object' && !Array.isArray(v);
    } catch {
      ok = false;
    }
    parsedOnce.set(c, ok);
  }
  return ok ? c.function.arguments : '{}';
}
const parsedOnce = new WeakMap<ToolCall, boolean>();

/** The wire shape only: drops bookkeeping fields (id, kind, tokens, reasoning) a caller may have left on. */
export function cleanMessage(m: ChatMessage): ChatMessage {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id };
    case 'assistant': {
      const out: AssistantWire = { role: 'assistant', content: m.content };
      if (m.tool_calls && m.tool_calls.length > 0) {
        out.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: wireArguments(c) },
        }));
      }
      return out;
    }
  }
}

export function normalizeToolCalls(raw: unknown, newId: (i: number) => string): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const out: ToolCall[] = [];
  raw.forEach((r, i) => {
    const f = (r as { function?: { name?: unknown; arguments?: unknown } })?.function;
    if (!f || typeof f.name !== 'string' || f.name === '') return;
    const args = typeof f.arguments === 'string' ? f.arguments : f.arguments === undefined ? '' : JSON.stringify(f.arguments);
    const id = (r as { id?: unknown }).id;
    out.push({ id: typeof id === 'string' && id !== '' ? id : newId(i), type: 'function', function: { name: f.name, arguments: args } });
  });
  return out;
}

let idSeq = 0;
export function freshId(i: number): string {
  idSeq = (idSeq + 1) % 1_000_000_000;
  return `call_${Date.now().toString(36)}_${idSeq}_${i}`;
}

/** The JSON body of POST /v1/chat/completions. */
export function chatRequestBody(model: string, req: ChatRequest, mode: ToolProtocolMode, stream: boolean): Record<string, unknown> {
  const tools = req.tools ?? [];
  const wire = req.messages.map(cleanMessage);
  const messages = mode === 'text' && tools.length > 0 ? toTextProtocolMessages(wire, tools) : wire;
  const body: Record<string, unknown> = { model, messages, stream };
  if (stream) body.stream_options = { include_usage: true };
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  if (mode === 'native' && tools.length > 0) {
    body.tools = tools;
    if (req.toolChoice !== undefined) body.tool_choice = req.toolChoice;
  }
  return { ...body, ...req.extraBody };
}
