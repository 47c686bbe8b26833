/**
 * Scripted-agent mode: a JSON list of replies played back in order.
 *
 * Each incoming chat request (that is not a compaction or judge request)
 * takes the first unused reply whose `match` is a substring of the last user
 * or tool message, or that has no `match`. `repeat: true` keeps a reply
 * available after use. When nothing fits, the default reply is used.
 */
import { readFileSync } from 'node:fs';
import { contentText, type WireMessage } from './template';

export interface ScriptToolCall {
  id?: string;
  name: string;
  /** An object (serialised for you) or a JSON string. */
  arguments?: unknown;
}

export interface ScriptReply {
  match?: string;
  content?: string;
  reasoning?: string;
  tool_calls?: ScriptToolCall[];
  finish_reason?: string;
  repeat?: boolean;
}

export interface SimScript {
  replies: ScriptReply[];
}

export function loadScript(src: SimScript | ScriptReply[] | string): SimScript {
  if (typeof src === 'string') {
    const parsed = JSON.parse(readFileSync(src, 'utf8')) as SimScript | ScriptReply[];
    return loadScript(parsed);
  }
  const replies = Array.isArray(src) ? src : src.replies;
  if (!Array.isArray(replies)) throw new Error('A sim script needs a "replies" array.');
  replies.forEach((r, i) => {
    if (r.content === undefined && (!r.tool_calls || r.tool_calls.length === 0)) {
      throw new Error(`Script reply ${i} has neither content nor tool_calls.`);
    }
    for (const c of r.tool_calls ?? [])
      if (typeof c.name !== 'string' || c.name === '') throw new Error(`Script reply ${i} has a tool call without a name.`);
  });
  return { replies };
}

export function lastUserOrToolText(messages: WireMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'user' || m.role === 'tool') return contentText(m.content);
  }
  return '';
}

export class ScriptPlayer {
  private readonly used: boolean[];
  constructor(readonly script: SimScript) {
    this.used = script.replies.map(() => false);
  }

  next(messages: WireMessage[]): ScriptReply | undefined {
    const last = lastUserOrToolText(messages);
    for (let i = 0; i < this.script.replies.length; i++) {
      const r = this.script.replies[i];
      if (this.used[i]) continue;
      if (r.match !== undefined && !last.includes(r.match)) continue;
      if (!r.repeat) this.used[i] = true;
      return r;
    }
    return undefined;
  }

  get remaining(): number {
    return this.used.filter((u, i) => !u || this.script.replies[i].repeat).length;
  }
}
