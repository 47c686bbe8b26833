/**
 * What the simulated model says: the summarizer for compaction requests, the
 * judge, the scripted agent, or a default reply; plus splitting text into
 * streamed pieces of about N tokens.
 */
import { randomUUID } from 'node:crypto';
import type { RequestKind } from './stats';
import type { ScriptPlayer } from './script';
import { detectCompaction, detectJudge, judge, summarize } from './summarizer';
import { answerProbe, detectProbe } from './probes';
import { contentText, type WireMessage, type WireTool } from './template';

export interface Reply {
  kind: RequestKind;
  content: string;
  reasoning?: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason?: string;
}

export interface ReplierOptions {
  count: (text: string) => number;
  chunkTokens: number;
  summaryTokens: number | undefined;
  player: () => ScriptPlayer | undefined;
  /** Scripted verdicts for judge requests, used in order before the deterministic judge. */
  judgeQueue: () => JudgeVerdict[];
}

export interface JudgeVerdict {
  alignment: number;
  non_contradiction: number;
  diagnosis: string;
}

function firstWords(text: string, n: number): string {
  return text.split(/\s+/).filter(Boolean).slice(0, n).join(' ');
}

export class Replier {
  private seq = 0;
  constructor(private readonly o: ReplierOptions) {}

  produce(messages: WireMessage[], tools: WireTool[], toolChoice: unknown, maxTokens?: number): Reply {
    const compaction = detectCompaction(messages);
    if (compaction) {
      const content = summarize(compaction, {
        targetTokens: this.o.summaryTokens,
        count: this.o.count,
        ...(maxTokens !== undefined ? { maxTokens } : {}),
      });
      return { kind: 'compaction', content, toolCalls: [] };
    }
    const probe = detectProbe(messages);
    if (probe) return { kind: 'chat', content: answerProbe(probe.probe, probe.context), toolCalls: [] };
    const j = detectJudge(messages);
    if (j) {
      const scripted = this.o.judgeQueue().shift();
      return { kind: 'judge', content: JSON.stringify(scripted ?? judge(j)), toolCalls: [] };
    }
    const r = this.o.player()?.next(messages);
    if (r) {
      return {
        kind: 'script',
        content: r.content ?? '',
        ...(r.reasoning ? { reasoning: r.reasoning } : {}),
        toolCalls: (r.tool_calls ?? []).map((c, i) => ({
          id: c.id ?? `chatcmpl-tool-${randomUUID().replace(/-/g, '').slice(0, 16)}${i}`,
          name: c.name,
          arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
        })),
        ...(r.finish_reason ? { finishReason: r.finish_reason } : {}),
      };
    }
    const named =
      toolChoice && typeof toolChoice === 'object' ? (toolChoice as { function?: { name?: string } }).function?.name : undefined;
    if (tools.length > 0 && (named || toolChoice === 'required')) {
      const name = named ?? tools[0].function.name;
      return { kind: 'tool-default', content: '', toolCalls: [{ id: `chatcmpl-tool-${++this.seq}`, name, arguments: '{}' }] };
    }
    const last = [...messages].reverse().find((m) => m.role === 'user');
    return { kind: 'chat', content: `Acknowledged: ${firstWords(contentText(last?.content), 24)}`, toolCalls: [] };
  }

  /** Splits text into streamed pieces of about `chunkTokens` tokens, keeping every character. */
  pieces(text: string): Array<{ text: string; tokens: number }> {
    const words = text.match(/\S+\s*|\s+/g) ?? [];
    const out: Array<{ text: string; tokens: number }> = [];
    let cur = '';
    let curTokens = 0;
    for (const w of words) {
      const t = this.o.count(w);
      if (cur !== '' && curTokens + t > this.o.chunkTokens) {
        out.push({ text: cur, tokens: curTokens });
        cur = '';
        curTokens = 0;
      }
      cur += w;
      curTokens += t;
    }
    if (cur !== '') out.push({ text: cur, tokens: curTokens });
    return out;
  }

  /** The longest prefix of whole pieces within maxTokens. */
  truncateTo(text: string, maxTokens: number): string {
    let out = '';
    let used = 0;
    for (const p of this.pieces(text)) {
      if (used + p.tokens > maxTokens) break;
      out += p.text;
      used += p.tokens;
    }
    return out;
  }
}
