/**
 * The text tool protocol, for servers that reject native tool calls (vLLM
 * without --enable-auto-tool-choice / --tool-call-parser).
 *
 * Request side: tools are described at the end of the system prompt (so the
 * prefix stays stable across turns and prefix caching still works); earlier
 * assistant tool calls are rendered as the same fenced blocks the model is
 * asked to write; tool results become user messages with a ```tool_result
 * fence.
 *
 * Reply side: every fenced block whose info string is `tool_call` and whose
 * body is JSON {"name": ..., "arguments": {...}} (or an array of those)
 * becomes a ToolCall; the hermes-style <tool_call>{...}</tool_call> form is
 * accepted too. Blocks that are not valid JSON stay in the text, so nothing is
 * silently dropped.
 */
import type { ChatMessage, ToolCall } from '../core/messages';
import type { ToolSpec } from './types';

export const TOOL_CALL_INFO = 'tool_call';
export const TOOL_RESULT_INFO = 'tool_result';

/** The block appended to the system prompt. Deterministic for a given tool list. */
export function describeToolsForPrompt(tools: ToolSpec[]): string {
  const lines = [
    '# Tools',
    '',
    'You can call the tools below. To call a tool, write a fenced block exactly like this:',
    '',
    '```tool_call',
    '{"name": "<tool name>", "arguments": {<arguments as JSON>}}',
    '```',
    '',
    'Write one block per call; several blocks call several tools. After your tool calls, stop and wait:',
    'each result comes back in a user message that starts with a ```tool_result block.',
    'When you need no tool, answer in plain text without such a block.',
    '',
    'Available tools:',
  ];
  for (const t of tools) {
    const f = t.function;
    lines.push('', `## ${f.name}`);
    if (f.description) lines.push(f.description);
    lines.push(`Parameters (JSON Schema): ${JSON.stringify(f.parameters ?? { type: 'object', properties: {} })}`);
  }
  return lines.join('\n');
}

/** A fence longer than any backtick run inside `body`. */
function fenceFor(body: string): string {
  const runs = body.match(/`+/g) ?? [];
  const longest = runs.reduce((m, r) => Math.max(m, r.length), 0);
  return '`'.repeat(Math.max(3, longest + 1));
}

export function renderToolCallBlock(call: ToolCall): string {
  let args: unknown = call.function.arguments;
  try {
    args = JSON.parse(call.function.arguments || '{}');
  } catch {
    // keep the raw string
  }
  const body = JSON.stringify({ name: call.function.name, arguments: args });
  const fence = fenceFor(body);
  return `${fence}${TOOL_CALL_INFO}\n${body}\n${fence}`;
}

export function renderToolResult(toolCallId: string, content: string): string {
  const fence = fenceFor(content);
  return `${fence}${TOOL_RESULT_INFO} ${toolCallId}\n${content}\n${fence}`;
}

/** Rewrites a native-tools conversation into the text protocol. */
export function toTextProtocolMessages(messages: ChatMessage[], tools: ToolSpec[]): ChatMessage[] {
  const description = tools.length > 0 ? describeToolsForPrompt(tools) : '';
  const out: ChatMessage[] = [];
  let placed = description === '';
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        if (!placed) {
          out.push({ role: 'system', content: `${m.content}\n\n${description}` });
          placed = true;
        } else {
          out.push(m);
        }
        break;
      case 'assistant': {
        const blocks = (m.tool_calls ?? []).map(renderToolCallBlock);
        const text = [m.content ?? '', ...blocks].filter((s) => s.length > 0).join('\n\n');
        out.push({ role: 'assistant', content: text });
        break;
      }
      case 'tool':
        out.push({ role: 'user', content: renderToolResult(m.tool_call_id, m.content) });
        break;
      default:
        out.push(m);
    }
  }
  if (!placed) out.unshift({ role: 'system', content: description });
  return out;
}

export interface ParsedText {
  /** The text outside the tool-call blocks, trimmed; null when nothing is left. */
  content: string | null;
  toolCalls: ToolCall[];
}

let counter = 0;
function defaultId(): string {
  counter = (counter + 1) % 1_000_000;
  return `call_txt_${Date.now().toString(36)}_${counter}`;
}

function callsFromJson(body: string, newId: () => string): ToolCall[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.trim());
  } catch {
    return undefined;
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const calls: ToolCall[] = [];
  for (const it of items) {
    if (!it || typeof it !== 'object') return undefined;
    const o = it as Record<string, unknown>;
    const name = o.name ?? (o.function as Record<string, unknown> | undefined)?.name;
    if (typeof name !== 'string' || name.length === 0) return undefined;
    const rawArgs = o.arguments ?? o.parameters ?? (o.function as Record<string, unknown> | undefined)?.arguments ?? {};
    const args = typeof rawArgs === 'string' ? rawArgs : JSON.stringify(rawArgs);
    calls.push({ id: typeof o.id === 'string' ? o.id : newId(), type: 'function', function: { name, arguments: args } });
  }
  return calls;
}

// ```tool_call ... ``` (any fence length ≥ 3; the closing fence may be missing at the very end)
const FENCED = /(`{3,})[ \t]*tool_call[ \t]*\r?\n([\s\S]*?)(?:\r?\n?\1(?!`)|$)/g;
const TAGGED = /<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g;

/** Parses a model reply written in the text tool protocol. */
export function parseTextToolCalls(text: string, newId: () => string = defaultId): ParsedText {
  const calls: ToolCall[] = [];
  const keep = (re: RegExp, bodyGroup: number, s: string) =>
    s.replace(re, (...m: string[]) => {
      const found = callsFromJson(m[bodyGroup], newId);
      if (!found) return m[0];
      calls.push(...found);
      return '';
    });
  let rest = keep(FENCED, 2, text);
  rest = keep(TAGGED, 1, rest);
  const content = rest.replace(/\n{3,}/g, '\n\n').trim();
  return { content: content.length > 0 ? content : null, toolCalls: calls };
}

const MARKERS = ['```tool_call', '<tool_call>'];

/**
 * Streams the visible part of a text-protocol reply: passes text through until
 * a tool-call marker starts, holding back a possible partial marker.
 */
export class TextToolStreamFilter {
  private buf = '';
  private stopped = false;

  push(text: string): string {
    if (this.stopped) return '';
    this.buf += text;
    const hit = MARKERS.map((m) => this.buf.indexOf(m)).filter((i) => i >= 0);
    if (hit.length > 0) {
      const at = Math.min(...hit);
      const out = this.buf.slice(0, at);
      this.stopped = true;
      this.buf = '';
      return out;
    }
    // hold back the longest suffix that is a prefix of a marker
    let hold = 0;
    for (const m of MARKERS) {
      for (let k = Math.min(m.length - 1, this.buf.length); k > hold; k--) {
        if (this.buf.endsWith(m.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    const out = this.buf.slice(0, this.buf.length - hold);
    this.buf = this.buf.slice(this.buf.length - hold);
    return out;
  }

  flush(): string {
    const out = this.stopped ? '' : this.buf;
    this.buf = '';
    return out;
  }
}
