import type { StoredMessage, ToolCall } from '../../../src/core/messages';

/** Small builders for hand-written conversations in tests. */
let seq = 0;
function meta(): { id: string; timestamp: number; kind: 'normal' } {
  seq++;
  return { id: `t${seq}`, timestamp: 1_700_000_000_000 + seq, kind: 'normal' };
}

export const sys = (content: string): StoredMessage => ({ role: 'system', content, ...meta() });
export const user = (content: string): StoredMessage => ({ role: 'user', content, ...meta() });
export const asst = (content: string): StoredMessage => ({ role: 'assistant', content, ...meta() });
export function call(name: string, args: object, id = `call_${seq + 1}`): StoredMessage {
  const tc: ToolCall = { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
  return { role: 'assistant', content: null, tool_calls: [tc], ...meta() };
}
export const result = (toolCallId: string, content: string): StoredMessage => ({
  role: 'tool',
  content,
  tool_call_id: toolCallId,
  ...meta(),
});

/** A tool call and its result as a pair. */
export function toolPair(name: string, output: string): StoredMessage[] {
  const c = call(name, { path: 'src/x.ts' });
  const id = (c as Extract<StoredMessage, { role: 'assistant' }>).tool_calls![0]!.id;
  return [c, result(id, output)];
}

/** Token counts where every message costs `n` unless listed. */
export function flatTokens(messages: readonly unknown[], n: number, overrides: Record<number, number> = {}): number[] {
  return messages.map((_, i) => overrides[i] ?? n);
}
