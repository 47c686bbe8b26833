import type { ChatMessage } from '../messages';
import { messageText, toWire } from '../messages';
import type { ModelRequest } from '../ports';
import { MESSAGE_OVERHEAD_TOKENS, type TokenCounter } from '../tokens/tokenCounter';
import { clearConsumedToolResults, deduplicateToolOutputs, pretrim, DEFAULT_PRETRIM } from '../pretrim';
import type { Block } from './partition';
import type { CompactionPlan } from './plan';
import { TARGET_CONTEXT_TOKENS } from './plan';
import type { InstructionInput } from './prompts';
import { cacheAlignedInstruction, fenceNonce, renderTranscript, targetBlockPrompt, targetTokens, transcriptTokens } from './prompts';
import { withCut } from './toolCuts';

export interface WorkerPrompt {
  request: ModelRequest;
  /** Local estimate of the prompt's size, the tool definitions it sends included. */
  promptTokens: number;
  /** Local estimate of the instruction alone (the part no cache can serve). */
  instructionTokens: number;
  /** Whether the prompt had to be pre-trimmed or shortened to fit the window. */
  trimmed: boolean;
  /** The text the worker is asked to summarise, as sent (fidelity checks which facts reach it). */
  targetText: string;
}

/** Block k's own content, with an oversize message cut to its part. */
function blockMessages(plan: CompactionPlan, block: Block): ChatMessage[] {
  const ctx = plan.snapshot.context;
  return block.messageIndices.map((i) => {
    const m = toWire(ctx[i]!);
    if (!block.part || block.part.messageIndex !== i) return m;
    const { from, to, part, parts } = block.part;
    const slice = (m.content ?? '').slice(from, to);
    return { ...m, content: `[part ${part + 1} of ${parts} of this message]\n${slice}` } as ChatMessage;
  });
}

/** A whole block's messages with long tool outputs cut (the cuts the planner counted) and repeats left out. */
function cutAndDeduplicated(plan: CompactionPlan, block: Block, focus: string | undefined): ChatMessage[] {
  const ctx = plan.snapshot.context;
  const own = blockMessages(plan, block);
  for (let k = 0; k < own.length; k++) own[k] = withCut(ctx, block.messageIndices[k]!, own[k]!, focus);
  return deduplicateToolOutputs(own).messages;
}

/** One fence suffix per plan, drawn when the plan is first built into prompts (after its data exists). */
const fences = new WeakMap<CompactionPlan, string>();

function planFence(plan: CompactionPlan): string {
  let f = fences.get(plan);
  if (!f) {
    f = fenceNonce();
    fences.set(plan, f);
  }
  return f;
}

export function instructionInput(plan: CompactionPlan, block: Block, focus: string | undefined): InstructionInput {
  return {
    fence: planFence(plan),
    verbosity: plan.settings.verbosity,
    focus,
    isLastBlock: block.index === plan.blocks.length - 1,
    blockNumber: block.index + 1,
    blockCount: plan.blocks.length,
    amendOf: plan.settings.amendOf,
    amendNotes: plan.settings.amendNotes,
    blockTokens: block.tokens,
    targetTokens: plan.workers.targets[block.index],
  };
}

/**
 * Builds block k's request in the plan's layout. `count` is the local token
 * estimate for a message.
 */
export function buildWorkerPrompt(
  plan: CompactionPlan,
  block: Block,
  focus: string | undefined,
  count: (m: ChatMessage) => number,
): WorkerPrompt {
  const x = instructionInput(plan, block, focus);
  // The planner's bound: room to finish the last section around the target, not to ramble.
  const maxTokens = plan.workers.maxTokens[block.index] ?? Math.max(256, 2 * targetTokens(x) + 128);
  const budget = plan.settings.contextWindow - maxTokens - countingMargin(plan.settings.contextWindow);
  const input: LayoutInput = { plan, block, x, maxTokens, budget, count };
  const prompt = plan.settings.layout === 'cache-aligned' ? cacheAligned(input) : targetBlock(input);
  prompt.request.stream = plan.settings.streamWorkers;
  return prompt;
}

/**
 * Room kept free in a worker's window for what the local count does not see: the server's tokenizer and chat template
 * count a little differently, and a request one token over is refused (a review's forced cache-aligned run asked for
 * 24,799 + 7,969 tokens of a 32,768 window, and the server counted 24,800).
 */
export function countingMargin(window: number): number {
  return Math.ceil(window * 0.03);
}

/** The tool definitions a cache-aligned worker's request carries: the server's template renders them into the prompt. */
function toolTokens(plan: CompactionPlan, count: (m: ChatMessage) => number): number {
  const tools = plan.snapshot.tools;
  return tools.length === 0 ? 0 : count({ role: 'system', content: JSON.stringify(tools) });
}

/** What both layouts build a worker's request from. */
interface LayoutInput {
  plan: CompactionPlan;
  block: Block;
  x: InstructionInput;
  maxTokens: number;
  /** Prompt tokens that fit beside maxTokens and a margin for counting (countingMargin) in the window. */
  budget: number;
  count: (m: ChatMessage) => number;
}

function cacheAligned({ plan, block, x, maxTokens, budget: room, count }: LayoutInput): WorkerPrompt {
  // Only this layout sends the agent's tool definitions (its prefix must be the agent's, byte for byte).
  const tools = toolTokens(plan, count);
  const budget = room - tools;
  const ctx = plan.snapshot.context;
  const known = plan.snapshot.tokens;
  const first = block.messageIndices[0]!;
  const last = block.messageIndices[block.messageIndices.length - 1]!;
  // The agent's own bytes up to the block, then the block itself.
  let before: ChatMessage[] = ctx.slice(0, first).map(toWire);
  const own = block.part ? blockMessages(plan, block) : ctx.slice(first, last + 1).map(toWire);
  let trimmed = false;
  const size = (msgs: ChatMessage[]) => msgs.reduce((s, m) => s + count(m), 0);
  // Sizes of untouched context messages come from the snapshot: re-counting
  // the growing prefix for every block would cost O(blocks × context).
  let beforeTokens = 0;
  for (let i = 0; i < first; i++) beforeTokens += known[i]!;
  const ownTokens = block.part ? size(own) : block.messageIndices.reduce((s, i) => s + known[i]!, 0) + sumGaps(known, block);
  const probe = cacheAlignedInstruction([...before, ...own], before.length, x);
  const instructionTokens = count({ role: 'user', content: probe });
  // Only when the replay would not fit does the worker lose byte-alignment:
  // pre-trim what precedes the block, then drop the oldest non-system context.
  if (beforeTokens + ownTokens + instructionTokens > budget) {
    trimmed = true;
    before = pretrim(before).messages;
    const systems = before.filter((m) => m.role === 'system');
    let rest: ChatMessage[] = before.filter((m) => m.role !== 'system');
    const fixed = size(systems) + ownTokens + instructionTokens;
    let restTokens = size(rest);
    while (rest.length > 0 && fixed + restTokens > budget) {
      const next = dropLeadingUnit(rest);
      restTokens -= size(rest.slice(0, rest.length - next.length));
      rest = next;
    }
    before = [...systems, ...rest];
    beforeTokens = fixed - ownTokens - instructionTokens + restTokens;
  }
  const messages = [...before, ...own];
  const instruction = cacheAlignedInstruction(messages, before.length, x);
  const request: ModelRequest = {
    messages: [...messages, { role: 'user', content: instruction }],
    maxTokens,
    temperature: 0,
  };
  if (plan.snapshot.tools.length > 0) {
    request.tools = [...plan.snapshot.tools];
    request.toolChoice = 'none';
  }
  if (plan.settings.model) request.model = plan.settings.model;
  const targetText = own.map(messageText).join('\n');
  return { request, promptTokens: tools + beforeTokens + ownTokens + instructionTokens, instructionTokens, trimmed, targetText };
}

/**
 * In the preserve-user-messages strategy a block's messages can skip kept
 * user messages; the replay includes them, so count them too.
 */
function sumGaps(known: readonly number[], block: Block): number {
  const idx = block.messageIndices;
  let extra = 0;
  for (let k = 1; k < idx.length; k++) for (let i = idx[k - 1]! + 1; i < idx[k]!; i++) extra += known[i]!;
  return extra;
}

/** Removes the oldest message, and the tool results that would be orphaned with it. */
function dropLeadingUnit(msgs: ChatMessage[]): ChatMessage[] {
  let k = 1;
  while (k < msgs.length && msgs[k]!.role === 'tool') k++;
  return msgs.slice(k);
}

/**
 * The session's own count of context message i when `m` (its form in a prompt) is untouched by pre-trim: only what
 * pre-trim rewrote needs counting (in the editor the session is counted on a worker thread, not by this counter).
 */
function sessionCount(plan: CompactionPlan, i: number, m: ChatMessage): number | undefined {
  return m.content === plan.snapshot.context[i]!.content ? plan.snapshot.tokens[i] : undefined;
}

/** Text counts of a whole block's messages that pre-trim left as they were: the session's own, less a message's overhead. */
function knownTexts(plan: CompactionPlan, block: Block, own: readonly ChatMessage[]): (number | undefined)[] {
  const known = new Array<number | undefined>(own.length);
  for (let k = 0; k < own.length; k++) {
    const n = sessionCount(plan, block.messageIndices[k]!, own[k]!);
    known[k] = n === undefined ? undefined : n - MESSAGE_OVERHEAD_TOKENS;
  }
  return known;
}

interface TrimmedContext {
  start: number;
  messages: ChatMessage[];
  /** Counts by message, taken when first needed (-1: not yet). */
  tokens: number[];
  count: (m: ChatMessage) => number;
}

/** The pre-trimmed context is the same for every block of a plan: build it once. */
const trimmedContexts = new WeakMap<CompactionPlan, TrimmedContext>();

function trimmedContext(plan: CompactionPlan, count: (m: ChatMessage) => number): TrimmedContext {
  let t = trimmedContexts.get(plan);
  if (!t) {
    const ctx = plan.snapshot.context;
    const nonSystem = ctx.findIndex((m) => m.role !== 'system');
    const start = nonSystem < 0 ? ctx.length : nonSystem;
    // pretrim()'s three tiers, with tier 2's cuts shared with the planner and the blocks (toolCuts.ts).
    const wire = ctx.slice(start).map(toWire);
    const cleared = clearConsumedToolResults(wire, DEFAULT_PRETRIM.keepRecentToolResults).messages;
    for (let k = 0; k < cleared.length; k++) if (cleared[k] === wire[k]) cleared[k] = withCut(ctx, start + k, wire[k]!);
    const messages = deduplicateToolOutputs(cleared).messages;
    const tokens = new Array<number>(messages.length);
    for (let k = 0; k < messages.length; k++) tokens[k] = sessionCount(plan, start + k, messages[k]!) ?? -1;
    t = { start, messages, tokens, count };
    trimmedContexts.set(plan, t);
  }
  return t;
}

/**
 * An instruction message as counted: its digits made zeros. Blocks' instructions differ only in their numbers (block
 * k of n, sizes, targets), so their shapes repeat and the memoizing counter tokenizes one per plan instead of one
 * per block. The count is the same: the tokenizers split digits into runs of at most three, and every such run is
 * one token whatever its digits.
 */
function instructionShape(m: ChatMessage): ChatMessage {
  const text = m.content;
  return text && DIGIT.test(text) ? ({ ...m, content: text.replace(DIGITS, '0') } as ChatMessage) : m;
}

const DIGIT = /\d/;
const DIGITS = /\d/g;

/**
 * A text's tokens by the message counter, less a message's own overhead. A class, not a callback made per prompt:
 * V8 holds a per-call callback's optimised code weakly and drops it at each major collection, so every compaction
 * compiled it again on a helper thread; a method's code lives as long as its class.
 */
class MessageTextCounter implements Pick<TokenCounter, 'countText'> {
  private readonly overhead: number;

  constructor(private readonly count: (m: ChatMessage) => number) {
    this.overhead = count({ role: 'user', content: '' });
  }

  countText(text: string): number {
    return this.count({ role: 'user', content: text }) - this.overhead;
  }
}

/** Context message k's count, plus the transcript framing it gets. */
function contextTokensAt(tc: TrimmedContext, k: number): number {
  let n = tc.tokens[k]!;
  if (n < 0) tc.tokens[k] = n = tc.count(tc.messages[k]!);
  // Transcript framing adds a few tokens per message over the message counts.
  return n + 6;
}

/**
 * The most recent context before `upto` that fits `cap`: the earliest start from which the rest fits, where a start
 * is the first message or one that is not a tool output (a tool result without its call would be left unexplained).
 * Walked from the block backwards, so only the messages near a block are counted: with the default 512-token cap
 * that is a few per block, not the whole pre-trimmed conversation (its cut tool outputs each need the tokenizer).
 */
export function recentContext(
  upto: number,
  cap: number,
  tokensAt: (k: number) => number,
  isTool: (k: number) => boolean,
): { from: number; tokens: number } {
  let from = upto;
  let tokens = 0;
  let unit = 0;
  for (let k = upto - 1; k >= 0; k--) {
    unit += tokensAt(k);
    if (k > 0 && isTool(k)) continue;
    if (tokens + unit > cap) break;
    tokens += unit;
    unit = 0;
    from = k;
  }
  return { from, tokens };
}

function targetBlock({ plan, block, x, maxTokens, budget, count }: LayoutInput): WorkerPrompt {
  const first = block.messageIndices[0]!;
  const tc = trimmedContext(plan, count);
  const start = tc.start;
  // Context before the block gets every pre-trim tier; the block itself is only
  // truncated and de-duplicated, since clearing its tool results would hide
  // exactly the facts the worker is asked to keep.
  const upto = Math.max(0, first - start);
  const own = block.part ? blockMessages(plan, block) : cutAndDeduplicated(plan, block, x.focus);
  const target = renderTranscript(own, first);
  const instructionOnly = targetBlockPrompt('', '', x);
  // The block's transcript is the prompt's largest part: count it message by message, and once, not once more
  // for the instruction share. A message pre-trim left alone has the session's own count.
  const spanTokens = transcriptTokens(own, first, new MessageTextCounter(count), block.part ? undefined : knownTexts(plan, block, own));
  const fixed = instructionOnly.reduce((s, m) => s + count(instructionShape(m)), 0) + spanTokens;
  // Only the most recent context goes along: each worker's KV stays about its block (the planner counts on it).
  const cap = Math.min(budget - fixed, plan.settings.targetContextTokens ?? TARGET_CONTEXT_TOKENS);
  const isTool = (k: number) => tc.messages[k]!.role === 'tool';
  const { from, tokens: contextTokens } = recentContext(upto, cap, (k) => contextTokensAt(tc, k), isTool);
  const messages = targetBlockPrompt(renderTranscript(tc.messages.slice(from, upto), start + from), target, x);
  const request: ModelRequest = { messages, maxTokens, temperature: 0 };
  if (plan.settings.model) request.model = plan.settings.model;
  return {
    request,
    promptTokens: fixed + contextTokens,
    instructionTokens: fixed - spanTokens,
    trimmed: upto > 0,
    targetText: target,
  };
}
