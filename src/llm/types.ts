/**
 * The shapes the rest of Splitpoint sees of a model server. The core mirrors
 * `ModelClient` as a port; everything here is plain data.
 */
import type { ChatMessage, ToolCall } from '../core/messages';

export type { ChatMessage, ToolCall };

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/** An OpenAI function tool. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatRequest {
  /** Defaults to the client's model, else the first model the server lists. */
  model?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** max_tokens for the completion. */
  maxTokens?: number;
  temperature?: number;
  stop?: string[];
  /** Stream the reply (default true). */
  stream?: boolean;
  /** Extra JSON fields merged into the request body (vLLM extensions, e.g. chat_template_kwargs). */
  extraBody?: Record<string, unknown>;
  /** Extra HTTP headers for this request. */
  headers?: Record<string, string>;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** usage.prompt_tokens_details.cached_tokens; undefined when the server does not report it. */
  cachedTokens: number | undefined;
}

/** Incremental events while a reply streams in. */
export type ChatDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta: string }
  /** A retry is starting after deltas were already delivered: discard what this call streamed so far. */
  | { type: 'reset'; attempt: number; reason: string };

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
