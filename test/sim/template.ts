/**
 * The simulator's chat template: ChatML with tools in the system turn (the
 * way Qwen/Hermes templates do it). It is deterministic and renders tools the
 * same whatever tool_choice is, as vLLM does by default, so a compaction
 * worker that replays the agent's prefix with tool_choice "none" shares the
 * agent's cached blocks.
 *
 *   <|im_start|>system\n{system}\n\n# Tools\n<tools>\n{tool JSON per line}\n</tools><|im_end|>\n
 *   <|im_start|>user\n{content}<|im_end|>\n
 *   <|im_start|>assistant\n{content}\n<tool_call>\n{"name":..,"arguments":..}\n</tool_call><|im_end|>\n
 *   <|im_start|>tool\n{content}<|im_end|>\n
 *   <|im_start|>assistant\n          ← generation prompt
 */
import type { SimTokenizer } from './tokenizer';

export interface WireToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}
export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}
export interface WireTool {
  type?: string;
  function: { name: string; description?: string; parameters?: unknown };
}

type Segment = string | { special: string };

/** Text content of a message: strings, or OpenAI content parts of type text. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('');
  }
  return '';
}

function toolsBlock(tools: WireTool[]): string {
  const lines = tools.map((t) => JSON.stringify({ type: 'function', function: t.function }));
  return `# Tools\n<tools>\n${lines.join('\n')}\n</tools>`;
}

function renderCall(c: WireToolCall): string {
  let args: unknown = c.function.arguments;
  try {
    args = JSON.parse(c.function.arguments);
  } catch {
    // keep the string
  }
  return `<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: args })}\n</tool_call>`;
}

export function renderSegments(messages: WireMessage[], tools: WireTool[] | undefined, addGenerationPrompt: boolean): Segment[] {
  const out: Segment[] = [];
  const turn = (role: string, body: string) => {
    out.push({ special: '<|im_start|>' }, `${role}\n${body}`, { special: '<|im_end|>' }, '\n');
  };
  const hasTools = !!tools && tools.length > 0;
  let toolsPlaced = !hasTools;
  messages.forEach((m, i) => {
    const text = contentText(m.content);
    if (m.role === 'system' && i === 0) {
      turn('system', hasTools ? `${text}\n\n${toolsBlock(tools!)}` : text);
      toolsPlaced = true;
      return;
    }
    if (!toolsPlaced) {
      turn('system', toolsBlock(tools!));
      toolsPlaced = true;
    }
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map(renderCall);
      turn('assistant', [text, ...calls].filter((s) => s.length > 0).join('\n'));
    } else {
      turn(m.role, text);
    }
  });
  if (!toolsPlaced) turn('system', toolsBlock(tools!));
  if (addGenerationPrompt) out.push({ special: '<|im_start|>' }, 'assistant\n');
  return out;
}

export function renderTokens(
  tok: SimTokenizer,
  messages: WireMessage[],
  tools: WireTool[] | undefined,
  addGenerationPrompt: boolean,
): number[] {
  const ids: number[] = [];
  for (const s of renderSegments(messages, tools, addGenerationPrompt)) {
    if (typeof s === 'string') {
      for (const t of tok.encode(s)) ids.push(t);
    } else {
      ids.push(tok.special(s.special));
    }
  }
  return ids;
}

export function renderText(messages: WireMessage[], tools: WireTool[] | undefined, addGenerationPrompt: boolean): string {
  return renderSegments(messages, tools, addGenerationPrompt)
    .map((s) => (typeof s === 'string' ? s : s.special))
    .join('');
}
