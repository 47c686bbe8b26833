import type { ToolSpec } from '../ports';

/**
 * Tools the agent can call. The host implements them with the VS Code API,
 * the CLI with Node; the loop only sees this interface.
 */
export interface ToolContext {
  signal: AbortSignal;
  /** The id of the tool call being executed (for spill files, logs). */
  callId: string;
}

export interface ToolResult {
  content: string;
  /** The tool ran but failed (bad path, non-zero exit); the model sees the content as an error report. */
  isError?: boolean;
}

export interface AgentTool {
  spec: ToolSpec;
  /** Whether this call needs the user's approval before it runs (writes, commands). */
  needsApproval(args: Record<string, unknown>): boolean;
  /** A short human description of what this call will do, for the approval prompt. */
  describe(args: Record<string, unknown>): string;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

export type ApprovalDecision = { approved: true } | { approved: false; reason: string };

/** Asks the user. The host shows buttons (and a diff); the CLI prompts or applies --yes. */
export interface ApprovalPort {
  request(
    call: { id: string; tool: string; args: Record<string, unknown>; summary: string },
    signal: AbortSignal,
  ): Promise<ApprovalDecision>;
}

export const autoApprove: ApprovalPort = { request: async () => ({ approved: true }) };

export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();

  constructor(tools: readonly AgentTool[] = []) {
    for (const t of tools) this.add(t);
  }

  add(tool: AgentTool): void {
    this.tools.set(tool.spec.function.name, tool);
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name);
  }

  /** Specs in a stable order, so the agent's request prefix is byte-identical between calls. */
  specs(): ToolSpec[] {
    return [...this.tools.values()].map((t) => t.spec);
  }
}

/** Parses a tool call's JSON arguments; the error text goes back to the model so it can correct itself. */
export function parseArguments(raw: string): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, args: {} };
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, error: 'arguments must be a JSON object' };
    return { ok: true, args: v as Record<string, unknown> };
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON (${(err as Error).message})` };
  }
}

export function stringArg(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.length === 0) throw new ToolInputError(`"${name}" must be a non-empty string`);
  return v;
}

export function optionalInt(args: Record<string, unknown>, name: string): number | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ToolInputError(`"${name}" must be an integer`);
  return v;
}

/** Bad arguments: reported to the model as a tool error, not raised to the user. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolInputError';
  }
}
