import type { ChatMessage } from '../messages';
import { toWire } from '../messages';
import type { ModelRequest } from '../ports';
import { deduplicateToolOutputs, pretrim, truncateLargeToolOutputs, DEFAULT_PRETRIM } from '../pretrim';
import type { Block } from './partition';
import type { CompactionPlan } from './plan';
import { MAX_OUTPUT_TOKENS } from './plan';
import type { InstructionInput } from './prompts';
import { cacheAlignedInstruction, renderTranscript, targetBlockPrompt } from './prompts';

export interface WorkerPrompt {
  request: ModelRequest;
  /** Local estimate of the prompt's size. */
  promptTokens: number;
  /** Local estimate of the instruction alone (the part no cache can serve). */
  instructionTokens: number;
  /** Whether the prompt had to be pre-trimmed or shortened to fit the window. */
  trimmed: boolean;
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

export function instructionInput(plan: CompactionPlan, block: Block, focus: string | undefined): InstructionInput {
  return {
    verbosity: plan.settings.verbosity,
    focus,
    isLastBlock: block.index === plan.blocks.length - 1,
    blockNumber: block.index + 1,
    blockCount: plan.blocks.length,
  };
}

/**
 * Builds block k's request in the plan's layout. `count` is the local token
 * estimate for a message.
 */
export function buildWorkerPrompt(plan: CompactionPlan, block: Block, focus: string | undefined, count: (m: ChatMessage) => number): WorkerPrompt {
  const x = instructionInput(plan, block, focus);
  const maxTokens = MAX_OUTPUT_TOKENS[plan.settings.verbosity];
  const budget = plan.settings.contextWindow - maxTokens;
  return plan.settings.layout === 'cache-aligned' ? cacheAligned(plan, block, x, maxTokens, budget, count) : targetBlock(plan, block, x, maxTokens, budget, count);
}

function cacheAligned(plan: CompactionPlan, block: Block, x: InstructionInput, maxTokens: number, budget: number, count: (m: ChatMessage) => number): WorkerPrompt {
  const ctx = plan.snapshot.context;
  const first = block.messageIndices[0]!;
  const last = block.messageIndices[block.messageIndices.length - 1]!;
  // The agent's own bytes up to the block, then the block itself.
  let before: ChatMessage[] = ctx.slice(0, first).map(toWire);
  const own = block.part ? blockMessages(plan, block) : ctx.slice(first, last + 1).map(toWire);
  let trimmed = false;
  const size = (msgs: ChatMessage[]) => msgs.reduce((s, m) => s + count(m), 0);
  const probe = cacheAlignedInstruction([...before, ...own], before.length, x);
  const instructionTokens = count({ role: 'user', content: probe });
  // Only when the replay would not fit does the worker lose byte-alignment:
  // pre-trim what precedes the block, then drop the oldest non-system context.
  if (size(before) + size(own) + instructionTokens > budget) {
    trimmed = true;
    before = pretrim(before).messages;
    const systems = before.filter((m) => m.role === 'system');
    let rest: ChatMessage[] = before.filter((m) => m.role !== 'system');
    while (rest.length > 0 && size(systems) + size(rest) + size(own) + instructionTokens > budget) rest = dropLeadingUnit(rest);
    before = [...systems, ...rest];
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
  return { request, promptTokens: size(request.messages), instructionTokens, trimmed };
}

/** Removes the oldest message, and the tool results that would be orphaned with it. */
function dropLeadingUnit(msgs: ChatMessage[]): ChatMessage[] {
  let k = 1;
  while (k < msgs.length && msgs[k]!.role === 'tool') k++;
  return msgs.slice(k);
}

function targetBlock(plan: CompactionPlan, block: Block, x: InstructionInput, maxTokens: number, budget: number, count: (m: ChatMessage) => number): WorkerPrompt {
  const ctx = plan.snapshot.context;
  const first = block.messageIndices[0]!;
  const nonSystemStart = ctx.findIndex((m) => m.role !== 'system');
  const start = nonSystemStart < 0 ? ctx.length : nonSystemStart;
  // Context before the block gets every pre-trim tier; the block itself is only
  // truncated and de-duplicated, since clearing its tool results would hide
  // exactly the facts the worker is asked to keep.
  let before = pretrim(ctx.slice(start, Math.max(start, first)).map(toWire)).messages;
  const ownRaw = block.part
    ? blockMessages(plan, block)
    : deduplicateToolOutputs(truncateLargeToolOutputs(blockMessages(plan, block), DEFAULT_PRETRIM).messages).messages;
  const target = renderTranscript(ownRaw, first);
  let trimmed = before.length > 0;
  const build = () => targetBlockPrompt(renderTranscript(before, start), target, x);
  let messages = build();
  const size = (msgs: ChatMessage[]) => msgs.reduce((s, m) => s + count(m), 0);
  while (before.length > 0 && size(messages) > budget) {
    before = dropLeadingUnit(before);
    trimmed = true;
    messages = build();
  }
  const instructionOnly = targetBlockPrompt('', '', x);
  const request: ModelRequest = { messages, maxTokens, temperature: 0 };
  if (plan.settings.model) request.model = plan.settings.model;
  return { request, promptTokens: size(messages), instructionTokens: size(instructionOnly), trimmed };
}
