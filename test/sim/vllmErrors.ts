/** vLLM's error bodies and messages, as its OpenAI server sends them. */

export type ErrorShape = 'current' | 'legacy';
export type OverflowWording = 'current' | 'early-2026' | 'v0.10' | 'legacy' | 'v1-decoder';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'BadRequestError',
  401: 'Unauthorized',
  404: 'NotFoundError',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

/**
 * vLLM ≥ 0.10: {"error": {"message", "type", "param", "code"}} (ErrorResponse wrapping ErrorInfo).
 * Older vLLM: {"object": "error", "message", "type", "param", "code"}.
 */
export function errorBody(message: string, status: number, shape: ErrorShape = 'current', param: string | null = null): unknown {
  const type = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'InternalServerError' : 'BadRequestError');
  if (shape === 'legacy') return { object: 'error', message, type, param, code: status };
  return { error: { message, type, param, code: status } };
}

export const TOOLS_UNSUPPORTED_MESSAGE = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set';

/** The overflow message for a prompt of `input` tokens (and `maxTokens` requested) against `window`. */
export function overflowMessage(wording: OverflowWording, window: number, input: number, maxTokens: number | undefined): string {
  const out = maxTokens ?? 0;
  switch (wording) {
    case 'legacy':
      return (
        `This model's maximum context length is ${window} tokens. However, you requested ${input + out} tokens ` +
        `(${input} in the messages, ${out} in the completion). Please reduce the length of the messages or completion.`
      );
    case 'v1-decoder':
      return (
        `The decoder prompt (length ${input}) is longer than the maximum model length of ${window}. ` +
        'Make sure that `max_model_len` is no smaller than the number of text tokens.'
      );
    case 'v0.10':
      if (input >= window) {
        return `This model's maximum context length is ${window} tokens. However, your request has ${input} input tokens. Please reduce the length of the input messages.`;
      }
      return (
        `'max_tokens' or 'max_completion_tokens' is too large: ${out}. This model's maximum context length is ${window} tokens ` +
        `and your request has ${input} input tokens (${out} > ${window} - ${input}).`
      );
    case 'early-2026':
      // As 'current', vLLM stopped tokenizing one token past the room it had.
      return (
        `You passed ${Math.min(input, window - out + 1)} input tokens and requested ${out} output tokens. However, the model's ` +
        `context length is only ${window} tokens, resulting in a maximum input length of ${window - out} tokens. Please reduce ` +
        'the length of the input prompt.'
      );
    case 'current':
    default: {
      // vLLM tokenizes at most one token past the room left for the prompt, so it knows only a lower bound.
      const atLeast = Math.min(input, window - out + 1);
      return (
        `This model's maximum context length is ${window} tokens. However, you requested ${out} output tokens and your prompt ` +
        `contains at least ${atLeast} input tokens, for a total of at least ${atLeast + out} tokens. Please reduce the length of ` +
        `the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${atLeast})`
      );
    }
  }
}
