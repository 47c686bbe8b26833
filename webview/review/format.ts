import type { BlockView, ViewMessage } from '../../src/protocol/messages';
import { isDroppedBlockText } from '../../src/protocol/review';

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

export function isDropped(b: BlockView): boolean {
  return isDroppedBlockText(b.summary);
}

export function messageText(m: ViewMessage): string {
  const calls = m.toolCalls?.map((c) => `→ ${c.name}(${c.arguments})`).join('\n') ?? '';
  const body = m.content + (m.truncated ? '\n[… output cut for display]' : '');
  return calls ? (body ? `${body}\n${calls}` : calls) : body;
}

const ESC = /[.*+?^${}()|[\]\\]/g;
/** One regex for a set of keys, longest first so a path wins over its file name. */
export function keysRegex(keys: string[]): RegExp | null {
  if (keys.length === 0) return null;
  const sorted = [...new Set(keys)].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((k) => k.replace(ESC, '\\$&')).join('|'), 'g');
}
