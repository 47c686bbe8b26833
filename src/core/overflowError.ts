/**
 * Recognises the "prompt does not fit the context window" errors that vLLM
 * (and a few OpenAI-compatible servers) return as HTTP 400, and pulls out the
 * window size and the input size. Pure: no I/O, no dependencies.
 *
 * Wordings recognised (N = window, M = input tokens, X = output tokens):
 *
 *  1. vLLM current (vLLM PR #36197, March 2026):
 *     "This model's maximum context length is N tokens. However, you requested
 *      X output tokens and your prompt contains at least M input tokens, for a
 *      total of at least T tokens. ... (parameter=input_tokens, value=M)"
 *     M is a lower bound, not the prompt's size: vLLM stops tokenizing one
 *     token past the room left (N − X + 1), so M is that whatever the prompt.
 *     Without "at least" the count is exact.
 * 1b. vLLM early 2026 (the renderer before that PR): "You passed M input
 *     tokens and requested X output tokens. However, the model's context
 *     length is only N tokens, ..." (M again a lower bound), or "You passed C
 *     input characters ..." (no token count).
 *  2. vLLM v0.6–v0.10, prompt alone too long:
 *     "This model's maximum context length is N tokens. However, your request
 *      has M input tokens. Please reduce the length of the input messages."
 *  3. vLLM v0.6–v0.10, prompt + max_tokens too long:
 *     "'max_tokens' or 'max_completion_tokens' is too large: X. This model's
 *      maximum context length is N tokens and your request has M input tokens
 *      (X > N - M)."
 *  4. vLLM legacy (≤ v0.5, same as old OpenAI):
 *     "This model's maximum context length is N tokens. However, you requested
 *      T tokens (M in the messages, X in the completion). ..."
 *  5. vLLM V1 engine input processor:
 *     "The decoder prompt (length M) is longer than the maximum model length
 *      of N. ..." (also "The prompt (length M) ..." and "The encoder prompt ...")
 *  6. OpenAI: "This model's maximum context length is N tokens. However, your
 *     messages resulted in M tokens."
 *  7. Prompt-length cap: "This model's maximum prompt length is N tokens.
 *     However, your request has M prompt tokens."
 *  8. Old vLLM scheduler: "Input prompt (M tokens) is too long and exceeds
 *     limit of N"
 *  9. OpenRouter-style: "This endpoint's maximum context length is N tokens.
 *     However, you requested about T tokens (M of text input, X in the output)"
 * 10. Window only: "... is longer than the maximum model length of N" →
 *     input undefined.
 */
export interface ContextOverflow {
  /** The context window (max_model_len) in tokens. */
  window: number;
  /** Prompt tokens the server counted, when the message says. */
  input: number | undefined;
  /** When the server said only that the prompt has at least this many tokens (it stopped counting there). */
  inputAtLeast?: number;
  /** Prompt plus requested completion tokens, when the message says. */
  requested?: number;
}

const NUM = '(\\d[\\d,_]*)';

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s.replace(/[,_]/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

interface Rule {
  re: RegExp;
  pick(m: RegExpMatchArray): ContextOverflow | undefined;
}

const RULES: Rule[] = [
  // 1. current vLLM
  {
    re: new RegExp(
      `maximum context length is ${NUM} tokens\\.?\\s*However, you requested ${NUM} output tokens ` +
        `and your prompt contains (at least )?${NUM} input tokens(?:, for a total of (?:at least )?${NUM} tokens)?`,
      'i',
    ),
    pick: (m) => {
      const window = num(m[1])!;
      const out = num(m[2])!;
      const count = num(m[4])!;
      if (m[3]) return { window, input: undefined, inputAtLeast: count };
      return { window, input: count, requested: num(m[5]) ?? count + out };
    },
  },
  // 1b. vLLM's renderer in early 2026
  {
    re: new RegExp(
      `You passed ${NUM} input (tokens|characters) and requested ${NUM} output tokens\\.\\s*However, the model's context length is only ${NUM}`,
      'i',
    ),
    pick: (m) => {
      const window = num(m[4])!;
      return m[2]!.toLowerCase() === 'tokens' ? { window, input: undefined, inputAtLeast: num(m[1])! } : { window, input: undefined };
    },
  },
  // 3. max_tokens too large (must come before rule 2: both contain "your request has")
  {
    re: new RegExp(
      `is too large: ${NUM}\\.\\s*This model's maximum context length is ${NUM} tokens and your request has ${NUM} input tokens`,
      'i',
    ),
    pick: (m) => {
      const out = num(m[1])!;
      const input = num(m[3])!;
      return { window: num(m[2])!, input, requested: input + out };
    },
  },
  // 2. prompt alone too long
  {
    re: new RegExp(`maximum context length is ${NUM} tokens\\.?\\s*However, your request has ${NUM} input tokens`, 'i'),
    pick: (m) => ({ window: num(m[1])!, input: num(m[2])! }),
  },
  // 4. legacy messages/completion split
  {
    re: new RegExp(
      `maximum context length is ${NUM} tokens\\.?\\s*However, you requested ${NUM} tokens \\(${NUM} in the messages, ${NUM} in the completion\\)`,
      'i',
    ),
    pick: (m) => ({ window: num(m[1])!, input: num(m[3])!, requested: num(m[2])! }),
  },
  // 9. OpenRouter-style
  {
    re: new RegExp(
      `maximum context length is ${NUM} tokens\\.?\\s*However, you requested about ${NUM} tokens \\(${NUM} of text input, ${NUM} in the output\\)`,
      'i',
    ),
    pick: (m) => ({ window: num(m[1])!, input: num(m[3])!, requested: num(m[2])! }),
  },
  // 6. OpenAI "messages resulted in"
  {
    re: new RegExp(`maximum context length is ${NUM} tokens\\.?\\s*However, your messages resulted in ${NUM} tokens`, 'i'),
    pick: (m) => ({ window: num(m[1])!, input: num(m[2])! }),
  },
  // 7. maximum prompt length
  {
    re: new RegExp(`maximum prompt length is ${NUM} tokens\\.?\\s*However, your request has ${NUM} prompt tokens`, 'i'),
    pick: (m) => ({ window: num(m[1])!, input: num(m[2])! }),
  },
  // 5. V1 input processor
  {
    re: new RegExp(`(?:decoder |encoder )?prompt \\(length ${NUM}\\) is longer than the maximum model length of ${NUM}`, 'i'),
    pick: (m) => ({ window: num(m[2])!, input: num(m[1])! }),
  },
  // 8. old scheduler warning
  {
    re: new RegExp(`Input prompt \\(${NUM} tokens\\) is too long and exceeds (?:the )?(?:capacity of block_manager|limit of ${NUM})`, 'i'),
    pick: (m) => (m[2] === undefined ? undefined : { window: num(m[2])!, input: num(m[1])! }),
  },
  // 10. window only
  {
    re: new RegExp(`longer than the maximum model length of ${NUM}`, 'i'),
    pick: (m) => ({ window: num(m[1])!, input: undefined }),
  },
  {
    re: new RegExp(`maximum context length is ${NUM} tokens`, 'i'),
    pick: (m) => ({ window: num(m[1])!, input: undefined }),
  },
];

/**
 * Returns the window and input size when `message` is a context-overflow
 * error, otherwise undefined. Accepts the raw message, a JSON error body, or
 * an SDK error string such as "400 This model's maximum context length ...".
 */
export function parseContextOverflow(message: string): ContextOverflow | undefined {
  if (!message) return undefined;
  // JSON bodies escape the apostrophe in "model's" in some servers; normalise.
  const text = message.replace(/\\'/g, "'").replace(/\s+/g, ' ');
  for (const rule of RULES) {
    const m = text.match(rule.re);
    if (!m) continue;
    const out = rule.pick(m);
    if (out && Number.isFinite(out.window) && out.window > 0) return out;
  }
  return undefined;
}
