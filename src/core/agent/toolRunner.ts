import type { ToolCall } from '../messages';
import type { SessionStore } from '../session/sessionStore';
import type { AgentEvent } from './events';
import { Cancelled } from './loopSupport';
import type { SpillPort, ToolOutputBudget } from './toolOutput';
import { capToolOutput } from './toolOutput';
import type { ApprovalPort, ToolRegistry } from './tools';
import { parseArguments, ToolInputError } from './tools';

export interface ToolRunnerDeps {
  store: SessionStore;
  tools: ToolRegistry;
  approvals: ApprovalPort;
  spill?: SpillPort | undefined;
  /** Caps each output in tokens too (capToolOutput); without it, in characters only. */
  outputBudget?: ToolOutputBudget;
  emit: (e: AgentEvent) => void;
}

const NOT_RUN = '[Not run: the user stopped the agent.]';

/**
 * Runs the calls of one assistant message in order. Every call gets a result message, even when rejected or
 * cancelled, so the log never has a call without its answer. `cutOffAt`: the reply's token limit, when the reply
 * reached it. Its last call was then being written when it stopped and is not run, even when its arguments parse:
 * vLLM closes a streamed call's unfinished JSON itself (its remaining-arguments fill), so a file's content cut
 * short arrives as valid arguments, and the model is told why instead.
 */
export async function runToolCalls(d: ToolRunnerDeps, calls: readonly ToolCall[], signal: AbortSignal, cutOffAt?: number): Promise<void> {
  const appendResult = async (callId: string, content: string, isError: boolean) => {
    const message = await d.store.append({ role: 'tool', tool_call_id: callId, content });
    d.emit({ type: 'tool-result', callId, message, isError });
  };
  const stopAfter = async (i: number) => {
    for (const rest of calls.slice(i)) await appendResult(rest.id, NOT_RUN, true);
    throw new Cancelled();
  };
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (signal.aborted) await stopAfter(i);
    const name = call.function.name;
    const tool = d.tools.get(name);
    const parsed = parseArguments(call.function.arguments);
    if (!tool) {
      await appendResult(
        call.id,
        `Unknown tool "${name}". Available: ${d.tools
          .specs()
          .map((s) => s.function.name)
          .join(', ')}.`,
        true,
      );
      continue;
    }
    if (cutOffAt !== undefined && i === calls.length - 1) {
      await appendResult(
        call.id,
        `Not run: your reply reached its limit of ${cutOffAt} tokens while writing this call, so its arguments may be cut ` +
          `short. Do it in smaller steps: a long file, write its first part and add the rest with edit_file.`,
        true,
      );
      continue;
    }
    if (!parsed.ok) {
      await appendResult(call.id, `Invalid arguments for ${name}: ${parsed.error}.`, true);
      continue;
    }
    const needsApproval = tool.needsApproval(parsed.args);
    d.emit({ type: 'tool-call', call, needsApproval });
    if (needsApproval) {
      let decision;
      try {
        decision = await d.approvals.request({ id: call.id, tool: name, args: parsed.args, summary: tool.describe(parsed.args) }, signal);
      } catch {
        decision = { approved: false as const, reason: signal.aborted ? 'the user stopped the agent' : 'the approval request failed' };
      }
      d.emit({
        type: 'tool-approval',
        callId: call.id,
        tool: name,
        approved: decision.approved,
        ...(decision.approved ? {} : { reason: decision.reason }),
      });
      if (!decision.approved) {
        await appendResult(call.id, `The user rejected this ${name} call${decision.reason ? `: ${decision.reason}` : ''}.`, true);
        if (signal.aborted) await stopAfter(i + 1);
        continue;
      }
    }
    let content: string;
    let isError: boolean;
    try {
      const r = await tool.execute(parsed.args, { signal, callId: call.id });
      content = r.content;
      isError = r.isError === true;
    } catch (err) {
      if (signal.aborted) {
        await appendResult(call.id, '[Cancelled while running: the user stopped the agent.]', true);
        await stopAfter(i + 1);
      }
      content = err instanceof ToolInputError ? `Invalid arguments: ${err.message}` : `Error: ${(err as Error).message}`;
      isError = true;
    }
    await appendResult(call.id, await capToolOutput(content, call.id, d.spill, d.outputBudget), isError);
  }
}
