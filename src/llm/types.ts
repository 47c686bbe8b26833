/**
 * The shapes the rest of Splitpoint sees of a model server. The core mirrors
 * `ModelClient` as a port; everything here is plain data.
 */
import type { ChatMessage, ToolCall } from '../core/messages';
import type { ModelDelta, ModelRequest, ModelUsage, ToolChoice, ToolSpec } from '../core/ports';

export type { ChatMessage, ToolCall };

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

// The request, usage and delta shapes are the core's port types (src/core/ports.ts);
// the client only adds transport options on top.
export type { ToolSpec, ToolChoice };

export interface ChatRequest extends ModelRequest {
  stop?: string[];
  /** Extra JSON fields merged into the request body (vLLM extensions, e.g. chat_template_kwargs). */
  extraBody?: Record<string, unknown>;
}

/** usage.prompt_tokens_details.cached_tokens is undefined when the server does not report it. */
export type Usage = ModelUsage;

/** Incremental events while a reply streams in; `reset` means a retry started after deltas were delivered. */
export type ChatDelta = ModelDelta;

export interface ChatCallOptions {
  signal?: AbortSignal;
  onDelta?: (delta: ChatDelta) => void;
  /** Overrides the client's request timeout for this call. */
  timeoutMs?: number;
}

export interface ChatResult {
  /** The assistant message, with tool_calls when the model called tools. */
  message: AssistantMessage;
  usage: Usage | undefined;
  /** stop | length | tool_calls | ... as the server said; null if it never said. */
  finishReason: string | null;
  reasoning?: string;
  model: string;
  /** Whether tools went over the native API or the text protocol. */
  toolProtocol: ToolProtocolMode;
  /** HTTP attempts made (1 = no retry). */
  attempts: number;
}

/** The small interface the core consumes. */
export interface ModelClient {
  chat(req: ChatRequest, opts?: ChatCallOptions): Promise<ChatResult>;
}

export type ToolProtocolMode = 'native' | 'text';

export interface ModelInfo {
  id: string;
  /** The context window, from vLLM's max_model_len; undefined if the server does not say. */
  maxModelLen: number | undefined;
  ownedBy?: string;
}

export interface TokenCount {
  count: number;
  /** The server's max_model_len when it came from /tokenize. */
  maxModelLen?: number;
  /** 'server' = exact count from POST /tokenize; 'local' = the local counter. */
  source: 'server' | 'local';
}

/** Local fallback counter used when the server has no /tokenize route. */
export type LocalTokenCounter = (messages: ChatMessage[], tools?: ToolSpec[]) => number | Promise<number>;
