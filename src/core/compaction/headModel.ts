import type { ChatMessage } from '../messages';
import type { ToolSpec } from '../ports';
import { deduplicateToolOutputs } from '../pretrim';
import type { BlockShape, HeadModel } from '../perf/planner';
import type { Block } from './partition';
import { partitionHead } from './partition';
import { cacheAlignedInstruction, targetBlockPrompt } from './prompts';
import { withCut } from './toolCuts';
import type { Verbosity } from './prompts';

/** Tokens a transcript adds per message (its "[#n role]" header and blank line). */
const TRANSCRIPT_FRAMING = 6;

/** Rough token count of text the planner does not tokenise (tools, instructions): ~4 characters a token. */
function roughTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface HeadModelInput {
  context: readonly ChatMessage[];
  tokens: readonly number[];
  /** Head messages (conversation indices, ascending). */
  head: readonly number[];
  /** Earlier summaries in the head that become their own blocks. */
  priorSummaries: readonly number[];
  tools: readonly ToolSpec[];
  verbosity: Verbosity;
  focus: string | undefined;
  targetContextTokens: number;
}

/**
 * The planner's view of a head: the real partition at each block size, and
 * what each layout would send for each block. Target-block workers see their
 * block pre-trimmed (huge tool outputs cut, repeats removed), so their prompt
 * size is estimated from the trimmed text once per message.
 */
export function headModel(x: HeadModelInput): HeadModel & { partition(B: number): Block[] } {
  const { context, tokens, head } = x;
  let headTokens = 0;
  for (const i of head) headTokens += tokens[i]!;
  const first = head[0] ?? context.length;
  let frameTokens = roughTokens(JSON.stringify(x.tools));
  for (let i = 0; i < first; i++) frameTokens += tokens[i]!;
  const last = head.at(-1) ?? -1;
  let tailTokens = 0;
  for (let i = last + 1; i < context.length; i++) tailTokens += tokens[i]!;
  // Loops, not callbacks made per call: this runs once per compaction, and V8 drops a per-call callback's optimised
  // code at each major collection, so each compaction would compile them again.
  const headMsgs = new Array<ChatMessage>(head.length);
  const cut = new Array<ChatMessage>(head.length);
  for (let k = 0; k < head.length; k++) {
    headMsgs[k] = context[head[k]!]!;
    // The same cuts the workers' prompts will carry (toolCuts.ts), so the scan is paid once.
    cut[k] = withCut(context, head[k]!, headMsgs[k]!, x.focus);
  }
  const trimmed = deduplicateToolOutputs(cut).messages;
  const transcript = new Map<number, number>();
  for (let k = 0; k < head.length; k++) {
    const ci = head[k]!;
    const before = (headMsgs[k]!.content ?? '').length;
    const after = (trimmed[k]?.content ?? '').length;
    const share = before > 0 ? after / before : 1;
    transcript.set(ci, Math.round(tokens[ci]! * share) + TRANSCRIPT_FRAMING);
  }
  const instr = { verbosity: x.verbosity, focus: x.focus, isLastBlock: true, blockNumber: 1, blockCount: 2, blockTokens: 4096 };
  const instructionTokens = {
    'cache-aligned': roughTokens(cacheAlignedInstruction(headMsgs.slice(0, 1), 0, instr)) + 8,
    'target-block': roughTokens(targetBlockPrompt('', '', instr)[1]!.content ?? '') + 8,
  };
  const cache = new Map<number, Block[]>();
  const partition = (B: number): Block[] => {
    const key = B >= headTokens ? Infinity : B;
    let blocks = cache.get(key);
    if (!blocks) {
      blocks =
        key === Infinity
          ? [{ index: 0, messageIndices: [...head], tokens: headTokens }]
          : partitionHead(context, head, tokens, { blockTokens: B, priorSummaries: x.priorSummaries });
      cache.set(key, blocks);
    }
    return blocks;
  };
  return {
    headTokens,
    frameTokens,
    tailTokens,
    instructionTokens,
    targetContextTokens: x.targetContextTokens,
    blocks: (B) => shapes(partition(B), transcript, tokens),
    partition,
  };
}

/** What the planner needs of each block: its tokens, and its transcript's as a target-block worker sends it. */
function shapes(blocks: readonly Block[], transcript: ReadonlyMap<number, number>, tokens: readonly number[]): BlockShape[] {
  const out = new Array<BlockShape>(blocks.length);
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k]!;
    let transcriptTokens = b.tokens + TRANSCRIPT_FRAMING;
    if (!b.part) {
      transcriptTokens = 0;
      for (const i of b.messageIndices) transcriptTokens += transcript.get(i) ?? tokens[i]!;
    }
    out[k] = { tokens: b.tokens, transcriptTokens };
  }
  return out;
}
