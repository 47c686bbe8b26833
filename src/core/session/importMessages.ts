import type { StoredMessage, ToolCall } from '../messages';
import { ImportError } from './errors';
import type { Clock, IdSource } from './storage';

/**
 * Turns a plain OpenAI messages array (what other tools export, or what an API
 * log holds) into stored messages. Accepts `[...]` or `{ "messages": [...] }`,
 * content given as text parts, and the newer `developer` role. Anything it
 * cannot represent faithfully is an error naming the message, never a guess.
 */
export function importMessages(raw: unknown, ids: IdSource, clock: Clock): StoredMessage[] {
  const list = Array.isArray(raw) ? raw : isRecord(raw) && Array.isArray(raw.messages) ? raw.messages : undefined;
  if (!list) throw new ImportError(undefined, 'expected a JSON array of chat messages, or an object with a "messages" array');
  const base = clock.now();
  const pendingCalls = new Set<string>();
  return list.map((item: unknown, i: number): StoredMessage => {
    if (!isRecord(item)) throw new ImportError(i, 'not an object');
    const meta = { id: ids.next('m'), timestamp: typeof item.timestamp === 'number' ? item.timestamp : base + i, kind: 'normal' as const };
    const role = item.role;
    switch (role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(item.content, i), ...meta };
      case 'user':
        return { role: 'user', content: textOf(item.content, i), ...meta };
      case 'assistant': {
        const calls = toolCallsOf(item.tool_calls, i, ids);
        for (const c of calls) pendingCalls.add(c.id);
        const content = item.content === null || item.content === undefined ? null : textOf(item.content, i);
        const m: StoredMessage = { role: 'assistant', content, ...meta };
        if (calls.length > 0) m.tool_calls = calls;
        const reasoning =
          typeof item.reasoning === 'string'
            ? item.reasoning
            : typeof item.reasoning_content === 'string'
              ? item.reasoning_content
              : undefined;
        if (reasoning) m.reasoning = reasoning;
        return m;
      }
      case 'tool': {
        if (typeof item.tool_call_id !== 'string') throw new ImportError(i, 'tool message without a tool_call_id');
        if (!pendingCalls.has(item.tool_call_id))
          throw new ImportError(i, `tool result for ${item.tool_call_id}, which no earlier assistant message called`);
        return { role: 'tool', content: textOf(item.content, i), tool_call_id: item.tool_call_id, ...meta };
      }
      default:
        throw new ImportError(i, `unsupported role ${JSON.stringify(role)} (expected system, developer, user, assistant or tool)`);
    }
  });
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function textOf(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
        if (isRecord(part) && typeof part.type === 'string') return `[${part.type} omitted]`;
        throw new ImportError(i, 'content part is not an object with a type');
      })
      .join('\n');
  }
  if (content === null || content === undefined) return '';
  throw new ImportError(i, 'content must be a string or an array of parts');
}

function toolCallsOf(raw: unknown, i: number, ids: IdSource): ToolCall[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ImportError(i, 'tool_calls must be an array');
  return raw.map((c: unknown) => {
    if (!isRecord(c) || !isRecord(c.function) || typeof c.function.name !== 'string') {
      throw new ImportError(i, 'a tool call needs function.name');
    }
    const args = c.function.arguments;
    return {
      id: typeof c.id === 'string' && c.id.length > 0 ? c.id : ids.next('call'),
      type: 'function' as const,
      function: { name: c.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    };
  });
}
