/**
 * The webview's copy of host state: the last snapshot plus the deltas since.
 * Pure (no DOM) so it can be reasoned about on its own; `apply` says which
 * parts of the view need repainting.
 */
import type { HostToWebview, ViewMessage, ViewSnapshot } from '../src/protocol/messages';
import { applyBlockProgress, applySplitChange } from '../src/protocol/messages';
import { buildPrefix, type Prefix } from './projection';

export interface Dirty {
  all?: boolean;
  messages?: 'reset' | 'append';
  gauge?: boolean;
  split?: boolean;
  streaming?: boolean;
  agent?: boolean;
  compaction?: boolean;
  /** Indices of the blocks that changed (when not the whole compaction did). */
  blocks?: number[];
  approvals?: boolean;
  pins?: boolean;
  archived?: string;
  notice?: { level: 'info' | 'warning' | 'error'; text: string };
  /** The host chose a new split: the handle resets to it. */
  splitReset?: boolean;
}

export class Model {
  snap: ViewSnapshot | null = null;
  prefix: Prefix = buildPrefix([], null);
  /** summary id -> archived originals, as answered by the host. */
  readonly archived = new Map<string, ViewMessage[]>();
  /**
   * When, by this webview's monotonic clock, the agent began what it waits on (the host sends durations, not times;
   * the wall clock may step).
   */
  waitingSince = 0;

  apply(msg: HostToWebview): Dirty {
    if (msg.type === 'snapshot') {
      this.snap = msg.snapshot;
      this.prefix = buildPrefix(this.snap.messages, this.snap.split);
      this.waitingSince = performance.now() - (msg.snapshot.agent.waiting?.elapsedMs ?? 0);
      return { all: true, splitReset: true };
    }
    const s = this.snap;
    if (!s) {
      // Deltas before the first snapshot cannot be placed; notices still show.
      return msg.type === 'notice' ? { notice: { level: msg.level, text: msg.text } } : {};
    }
    switch (msg.type) {
      case 'message-added': {
        const m = msg.message;
        const split = applySplitChange(s.split, msg.split);
        const splitChanged = !sameSplit(s.split, split);
        s.gauge = msg.gauge;
        s.split = split;
        // The handle's limits and the allowed ticks follow the gauge update; a full split render only when the split itself moved.
        const d: Dirty = { gauge: true, split: splitChanged, splitReset: splitChanged };
        if (m.index === s.messages.length) {
          s.messages.push(m);
          if (splitChanged) this.prefix = buildPrefix(s.messages, s.split);
          else this.prefix = appendPrefix(this.prefix, m, s.split);
          d.messages = 'append';
        } else {
          // Out of order (or a replacement): rebuild.
          const copy = s.messages.filter((x) => x.id !== m.id && x.index !== m.index);
          copy.push(m);
          copy.sort((a, b) => a.index - b.index);
          s.messages = copy;
          this.prefix = buildPrefix(s.messages, s.split);
          d.messages = 'reset';
        }
        if (m.role === 'assistant') {
          s.agent.streaming = '';
          d.streaming = true;
        }
        return d;
      }
      case 'assistant-reset':
        s.agent.streaming = '';
        return { streaming: true };
      case 'assistant-delta':
        s.agent.streaming += msg.text;
        // The host ends the wait with the text without posting it (agentWait.ts).
        s.agent.waiting = null;
        return { streaming: true };
      case 'agent-state':
        s.agent.running = msg.running;
        if (!msg.running) {
          s.agent.streaming = '';
          s.agent.waiting = null;
        }
        return { agent: true, streaming: true };
      case 'agent-waiting':
        s.agent.waiting = msg.waiting;
        this.waitingSince = performance.now() - (msg.waiting?.elapsedMs ?? 0);
        return { streaming: true };
      case 'compaction':
        s.compaction = msg.compaction;
        if (msg.compaction && msg.compaction.focus !== null) s.focus = msg.compaction.focus;
        return { compaction: true, gauge: true };
      case 'block': {
        const c = s.compaction;
        if (!c || c.id !== msg.compactionId) return {};
        const i = c.blocks.findIndex((b) => b.index === msg.block.index);
        if (i >= 0) c.blocks[i] = msg.block;
        else {
          c.blocks.push(msg.block);
          c.blocks.sort((a, b) => a.index - b.index);
          return { compaction: true };
        }
        return { blocks: [msg.block.index], gauge: true };
      }
      case 'block-progress': {
        const c = s.compaction;
        if (!c || c.id !== msg.compactionId) return {};
        c.blocks = applyBlockProgress(c.blocks, msg.progress);
        const blocks = msg.progress.map((p) => p.index).filter((i) => c.blocks.some((b) => b.index === i));
        return blocks.length > 0 ? { blocks, gauge: true } : {};
      }
      case 'approval-requested':
        s.agent.approvals = s.agent.approvals.filter((a) => a.callId !== msg.approval.callId);
        s.agent.approvals.push(msg.approval);
        return { approvals: true };
      case 'approval-resolved':
        s.agent.approvals = s.agent.approvals.filter((a) => a.callId !== msg.callId);
        return { approvals: true };
      case 'pins':
        s.pins = msg.pins;
        return { pins: true };
      case 'archived':
        this.archived.set(msg.summaryId, msg.messages);
        return { archived: msg.summaryId };
      case 'notice':
        return { notice: { level: msg.level, text: msg.text } };
      case 'split':
        s.split = msg.split;
        this.prefix = buildPrefix(s.messages, s.split);
        return { split: true, gauge: true, splitReset: true };
    }
  }
}

function sameSplit(a: ViewSnapshot['split'], b: ViewSnapshot['split']): boolean {
  return (
    a.strategy === b.strategy &&
    a.tailStartIndex === b.tailStartIndex &&
    a.frameEnd === b.frameEnd &&
    a.keptIndices.length === b.keptIndices.length &&
    a.keptIndices.every((v, i) => v === b.keptIndices[i])
  );
}

function appendPrefix(p: Prefix, m: ViewMessage, split: ViewSnapshot['split']): Prefix {
  const n = p.all.length;
  const all = new Float64Array(n + 1);
  const head = new Float64Array(n + 1);
  all.set(p.all);
  head.set(p.head);
  const t = m.tokens > 0 ? m.tokens : 0;
  all[n] = all[n - 1]! + t;
  // Same rule as buildPrefix: the host's frame end and kept list decide.
  const compactable = n - 1 >= split.frameEnd && !split.keptIndices.includes(n - 1);
  head[n] = head[n - 1]! + (compactable ? t : 0);
  return { all, head, total: all[n]!, summaries: m.kind === 'summary' ? [...p.summaries, n - 1] : p.summaries };
}
