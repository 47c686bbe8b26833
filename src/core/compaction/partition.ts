import type { ChatMessage } from '../messages';
import type { BlockView } from './events';

/**
 * Cuts the head into blocks of about B tokens. Edges fall on message
 * boundaries; an assistant tool call and its results are one unit that is
 * never cut; only a single message bigger than B is split, into parts.
 */
export interface BlockPart {
  /** Index (into the conversation) of the message this part belongs to. */
  messageIndex: number;
  /** 0-based part number and how many parts the message has. */
  part: number;
  parts: number;
  /** Character range of the message's content this part covers. */
  from: number;
  to: number;
}

export interface Block {
  index: number;
  /** Conversation indices of the head messages in this block, ascending. */
  messageIndices: number[];
  tokens: number;
  /** Set when this block is one part of an oversize message. */
  part?: BlockPart;
  /** Set when this block is an earlier summary being folded in (re-compaction). */
  isPriorSummary?: boolean;
}

interface Unit {
  indices: number[];
  tokens: number;
}

/**
 * Groups head messages into units that must stay together: an assistant
 * message with tool calls plus the tool results that answer it.
 */
export function atomicUnits(messages: readonly ChatMessage[], head: readonly number[], tokens: readonly number[]): Unit[] {
  const units: Unit[] = [];
  let open: { unit: Unit; pending: Set<string> } | undefined;
  for (const i of head) {
    const m = messages[i]!;
    if (m.role === 'tool' && open && open.pending.has(m.tool_call_id)) {
      open.unit.indices.push(i);
      open.unit.tokens += tokens[i]!;
      open.pending.delete(m.tool_call_id);
      if (open.pending.size === 0) open = undefined;
      continue;
    }
    const unit = { indices: [i], tokens: tokens[i]! };
    units.push(unit);
    open =
      m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0
        ? { unit, pending: new Set(m.tool_calls.map((c) => c.id)) }
        : undefined;
  }
  return units;
}

export interface PartitionOptions {
  blockTokens: number;
  /** Conversation indices of earlier summaries in the head; each becomes its own oldest block. */
  priorSummaries?: readonly number[];
}

export function partitionHead(
  messages: readonly ChatMessage[],
  head: readonly number[],
  tokens: readonly number[],
  opts: PartitionOptions,
): Block[] {
  const B = Math.max(1, opts.blockTokens);
  const prior = new Set(opts.priorSummaries ?? []);
  const blocks: Block[] = [];
  const push = (b: Omit<Block, 'index'>): void => {
    blocks.push({ ...b, index: blocks.length });
  };
  let cur: Unit | undefined;
  // A block far below B would cost a worker call for a summary no shorter than itself (the summary's headings alone
  // are tens of tokens): it joins the block before it when that one is plain messages, or the unit after it.
  const tiny = (u: Unit): boolean => u.tokens < B / 8;
  const plainBefore = (): Block | undefined => {
    const last = blocks.at(-1);
    return last && !last.part && !last.isPriorSummary ? last : undefined;
  };
  const flush = (): void => {
    const before = plainBefore();
    if (cur && tiny(cur) && before) {
      before.messageIndices.push(...cur.indices);
      before.tokens += cur.tokens;
    } else if (cur && cur.indices.length > 0) push({ messageIndices: cur.indices, tokens: cur.tokens });
    cur = undefined;
  };
  for (const i of head) {
    if (prior.has(i)) push({ messageIndices: [i], tokens: tokens[i]!, isPriorSummary: true });
  }
  const rest = head.filter((i) => !prior.has(i));
  for (const u of atomicUnits(messages, rest, tokens)) {
    const single = u.indices.length === 1 ? u.indices[0]! : undefined;
    if (u.tokens > B && single !== undefined) {
      flush();
      splitOversize(messages[single]!, single, u.tokens, B).forEach((p) =>
        push({ messageIndices: [single], tokens: p.tokens, part: p.part }),
      );
      continue;
    }
    if (!cur) {
      cur = { indices: [...u.indices], tokens: u.tokens };
      continue;
    }
    // Close the block at whichever edge lands nearer to B, so N ≈ head / B.
    const withUnit = cur.tokens + u.tokens;
    const closes = withUnit > B && Math.abs(withUnit - B) > Math.abs(cur.tokens - B);
    if (closes && !(tiny(cur) && !plainBefore())) {
      flush();
      cur = { indices: [...u.indices], tokens: u.tokens };
    } else {
      cur.indices.push(...u.indices);
      cur.tokens = withUnit;
    }
  }
  flush();
  return blocks;
}

/** Splits one message's content into ceil(tokens / B) parts on line breaks where possible. */
function splitOversize(m: ChatMessage, index: number, tokens: number, B: number): { part: BlockPart; tokens: number }[] {
  const text = m.content ?? '';
  const parts = Math.max(1, Math.ceil(tokens / B));
  const out: { part: BlockPart; tokens: number }[] = [];
  let from = 0;
  for (let p = 0; p < parts; p++) {
    let to = p === parts - 1 ? text.length : Math.round(((p + 1) * text.length) / parts);
    if (p < parts - 1) {
      const nl = text.lastIndexOf('\n', to);
      if (nl > from + (to - from) / 2) to = nl + 1;
    }
    out.push({
      part: { messageIndex: index, part: p, parts, from, to },
      tokens: Math.round((tokens * (to - from)) / Math.max(1, text.length)),
    });
    from = to;
  }
  return out;
}

/** A block as the engine first shows it: queued, over its span of messages. */
export function queuedView(block: Block): BlockView {
  const idx = block.messageIndices;
  const span = { index: block.index, firstMessage: idx[0]!, lastMessage: idx[idx.length - 1]!, tokens: block.tokens };
  return { ...span, status: 'queued', streamedTokens: 0, summary: undefined, error: undefined, stats: undefined, ...keptWithin(idx) };
}

/** The indices a block's span skips: preserving user messages, the kept ones between its agent messages. */
function keptWithin(indices: readonly number[]): { kept?: number[] } {
  const kept: number[] = [];
  for (let k = 1; k < indices.length; k++) for (let i = indices[k - 1]! + 1; i < indices[k]!; i++) kept.push(i);
  return kept.length > 0 ? { kept } : {};
}
