import type { ChatMessage } from './messages';

/**
 * What the engine needs from a model server, as the engine sees it. src/llm's
 * client satisfies this structurally; tests can pass anything that does.
 */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface ModelRequest {
  /** Defaults to the client's model, else the first model the server lists. */
  model?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** max_tokens for the completion. */
  maxTokens?: number;
  temperature?: number;
  /** Stream the reply (default true). */
  stream?: boolean;
  /** Extra HTTP headers for this request. */
  headers?: Record<string, string>;
  /**
   * How fresh streamed deltas must be: they may arrive in batches up to this
   * many ms apart (the caller shows them no more often). Fewer, larger
   * batches cost the client less CPU; unset means the transport's default.
   * A function is asked again before every batch, so a running stream is read
   * more or less often as its caller's needs change (a progress view shown or
   * hidden, more or fewer streams running beside it).
   */
  deltaBatchMs?: number | (() => number);
}

export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | undefined;
}

export type ModelDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'reset'; attempt: number; reason: string };

export interface ModelResult {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  usage: ModelUsage | undefined;
  finishReason: string | null;
  reasoning?: string;
  /** 'text' when the tools were described in the prompt and the calls parsed from the reply's text. */
  toolProtocol?: 'native' | 'text';
}

export interface ModelPort {
  chat(req: ModelRequest, opts?: { signal?: AbortSignal; onDelta?: (d: ModelDelta) => void }): Promise<ModelResult>;
}

/** A concurrency limit shared by everything that talks to one endpoint. */
export interface LimiterPort {
  acquire(signal?: AbortSignal): Promise<() => void>;
}

/** No limit: for tests and single calls. */
export const unlimited: LimiterPort = { acquire: async () => () => undefined };
