/**
 * Assembles a streamed chat completion from raw chunks. Tool-call fragments
 * are matched to calls by `index` when the server uses it properly, by `id`
 * when the index is missing or reused, and by position (continue the latest
 * call) when neither helps.
 */
import type { ToolCall } from '../core/messages';
import type { ChatDelta, Usage } from './types';

/** The loose shape of one streamed chunk (servers differ; every field is optional). */
export interface RawChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      reasoning?: string | null;
      reasoning_content?: string | null;
      tool_calls?: RawToolCallDelta[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: RawUsage | null;
  model?: string;
}

export interface RawToolCallDelta {
  index?: number | null;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

export interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

export function usageFromRaw(u: RawUsage | null | undefined): Usage | undefined {
  if (!u || typeof u.prompt_tokens !== 'number') return undefined;
  const cached = u.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens ?? 0,
    cachedTokens: typeof cached === 'number' ? cached : undefined,
  };
}

interface Slot {
  id: string | undefined;
  name: string;
  args: string;
}

export class StreamAssembler {
  private content = '';
  private reasoning = '';
  private readonly slots: Slot[] = [];
  /** server index → our slot, the latest call that used it. */
  private readonly byIndex = new Map<number, number>();
  private readonly byId = new Map<string, number>();
  private _finishReason: string | null = null;
  private _usage: Usage | undefined;
  private _model: string | undefined;
  private _chunks = 0;

  constructor(private readonly newId: (n: number) => string = (n) => `call_${n}`) {}

  get finishReason(): string | null {
    return this._finishReason;
  }
  get usage(): Usage | undefined {
    return this._usage;
  }
  get model(): string | undefined {
    return this._model;
  }
  get chunks(): number {
    return this._chunks;
  }

  /** Feeds the text of a chunk that carried only text (see plainContent.ts). */
  pushContent(text: string): ChatDelta | undefined {
    this._chunks++;
    if (text.length === 0) return undefined;
    this.content += text;
    return { type: 'content', text };
  }

  /** Feeds one chunk; returns the deltas it contained, in order. */
  push(chunk: RawChunk): ChatDelta[] {
    this._chunks++;
    const out: ChatDelta[] = [];
    if (chunk.model) this._model = chunk.model;
    const u = usageFromRaw(chunk.usage);
    if (u) this._usage = u;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0) ?? chunk.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    const reasoning = d.reasoning ?? d.reasoning_content;
    if (typeof reasoning === 'string' && reasoning.length > 0) {
      this.reasoning += reasoning;
      out.push({ type: 'reasoning', text: reasoning });
    }
    if (typeof d.content === 'string' && d.content.length > 0) {
      this.content += d.content;
      out.push({ type: 'content', text: d.content });
    }
    for (const tc of d.tool_calls ?? []) {
      const delta = this.pushToolCall(tc);
      if (delta) out.push(delta);
    }
    if (choice.finish_reason) this._finishReason = choice.finish_reason;
    return out;
  }

  private pushToolCall(tc: RawToolCallDelta): ChatDelta | undefined {
    const id = typeof tc.id === 'string' && tc.id.length > 0 ? tc.id : undefined;
    const index = typeof tc.index === 'number' ? tc.index : undefined;
    const name = typeof tc.function?.name === 'string' && tc.function.name.length > 0 ? tc.function.name : undefined;
    const rawArgs = tc.function?.arguments;
    const args = typeof rawArgs === 'string' ? rawArgs : rawArgs === undefined || rawArgs === null ? '' : JSON.stringify(rawArgs);

    let slot: number | undefined;
    if (id !== undefined) {
      slot = this.byId.get(id);
      if (slot === undefined) {
        // A new id is a new call, even if the server reused an index.
        const latest = this.slots.length - 1;
        // ...unless the latest call has no id yet and this is its first id (id sent after the name).
        if (latest >= 0 && this.slots[latest].id === undefined && (index === undefined || this.byIndex.get(index) === latest)) {
          slot = latest;
        } else {
          slot = this.open();
        }
        this.slots[slot].id = id;
        this.byId.set(id, slot);
      }
    } else if (index !== undefined && this.byIndex.has(index)) {
      slot = this.byIndex.get(index)!;
      // A different function name on a reused index with no id: the server reused the index for a new call.
      const s = this.slots[slot];
      if (name !== undefined && s.name !== '' && s.name !== name) slot = this.open();
    } else if (index !== undefined) {
      slot = this.open();
    } else {
      // No id, no index: continue the latest call, unless this starts a call with a new name.
      const latest = this.slots.length - 1;
      if (latest < 0 || (name !== undefined && this.slots[latest].name !== '' && this.slots[latest].name !== name)) {
        slot = this.open();
      } else {
        slot = latest;
      }
    }
    if (index !== undefined) this.byIndex.set(index, slot);

    const s = this.slots[slot];
    let newName: string | undefined;
    if (name !== undefined && s.name === '') {
      s.name = name;
      newName = name;
    }
    s.args += args;
    if (newName === undefined && args === '' && id === undefined) return undefined;
    return { type: 'tool_call', index: slot, id: s.id, name: newName, argumentsDelta: args };
  }

  private open(): number {
    this.slots.push({ id: undefined, name: '', args: '' });
    return this.slots.length - 1;
  }

  get text(): string {
    return this.content;
  }
  get reasoningText(): string {
    return this.reasoning;
  }

  /** The tool calls so far, with generated ids where the server sent none. Calls without a name are dropped. */
  toolCalls(): ToolCall[] {
    return this.slots
      .map((s, i) => ({ s, i }))
      .filter(({ s }) => s.name !== '')
      .map(({ s, i }) => ({
        id: s.id ?? this.newId(i),
        type: 'function' as const,
        function: { name: s.name, arguments: s.args },
      }));
  }
}
