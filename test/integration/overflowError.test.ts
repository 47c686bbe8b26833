import assert from 'node:assert/strict';
import { parseContextOverflow } from '../../src/core/overflowError';
import { isOverflow } from '../../src/core/agent/loopSupport';
import { ContextOverflowError } from '../../src/llm/errors';
import { overflowMessage } from '../sim/vllmErrors';

describe('parseContextOverflow', () => {
  it('reads the current vLLM wording (output tokens + "prompt contains at least")', () => {
    const msg =
      "This model's maximum context length is 40960 tokens. However, you requested 900 output tokens and your prompt contains at least " +
      '40100 input tokens, for a total of at least 41000 tokens. Please reduce the length of the input prompt or the number of requested ' +
      'output tokens. (parameter=input_tokens, value=40100)';
    // "At least": vLLM stopped counting one token past the room (40960 − 900 + 1 = 40061 here would be typical), so the
    // count is a bound, not the prompt's size; callers use their own count.
    assert.deepEqual(parseContextOverflow(msg), { window: 40960, input: undefined, inputAtLeast: 40100 });
  });

  it('reads the exact count when the current wording has no "at least", and derives the total without its clause', () => {
    const msg =
      "This model's maximum context length is 262144 tokens. However, you requested 32000 output tokens and your prompt contains 230145 input tokens.";
    assert.deepEqual(parseContextOverflow(msg), { window: 262144, input: 230145, requested: 262145 });
  });

  it('reads the early-2026 renderer wording ("You passed M input tokens ... only N tokens"), and its characters form', () => {
    const tokens =
      "You passed 24577 input tokens and requested 8192 output tokens. However, the model's context length is only 32768 tokens, " +
      'resulting in a maximum input length of 24576 tokens. Please reduce the length of the input prompt.';
    assert.deepEqual(parseContextOverflow(tokens), { window: 32768, input: undefined, inputAtLeast: 24577 });
    const chars =
      "You passed 400000 input characters and requested 8192 output tokens. However, the model's context length is only 32768, " +
      'resulting in a maximum input length of 24576 tokens.';
    assert.deepEqual(parseContextOverflow(chars), { window: 32768, input: undefined });
  });

  it('reads the v0.6–0.10 "your request has M input tokens" wording', () => {
    const msg =
      "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.";
    assert.deepEqual(parseContextOverflow(msg), { window: 32768, input: 40000 });
  });

  it('reads the v0.10 "\'max_tokens\' ... is too large" wording', () => {
    const msg =
      "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).";
    assert.deepEqual(parseContextOverflow(msg), { window: 4096, input: 2778, requested: 10778 });
  });

  it('reads the legacy "(X in the messages, Y in the completion)" wording', () => {
    const msg =
      "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.";
    assert.deepEqual(parseContextOverflow(msg), { window: 16384, input: 112946, requested: 122946 });
  });

  it('reads the V1 input-processor "decoder prompt (length M)" wording', () => {
    const msg =
      'The decoder prompt (length 12324) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.';
    assert.deepEqual(parseContextOverflow(msg), { window: 8192, input: 12324 });
    assert.deepEqual(parseContextOverflow('The prompt (length 9000) is longer than the maximum model length of 8192.'), {
      window: 8192,
      input: 9000,
    });
  });

  it('reads OpenAI, prompt-length, scheduler and OpenRouter variants', () => {
    assert.deepEqual(
      parseContextOverflow("This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens."),
      {
        window: 8192,
        input: 9100,
      },
    );
    assert.deepEqual(
      parseContextOverflow("This model's maximum prompt length is 4000 tokens. However, your request has 4100 prompt tokens."),
      {
        window: 4000,
        input: 4100,
      },
    );
    assert.deepEqual(parseContextOverflow('Input prompt (35247 tokens) is too long and exceeds limit of 32768'), {
      window: 32768,
      input: 35247,
    });
    assert.deepEqual(
      parseContextOverflow(
        "This endpoint's maximum context length is 8192 tokens. However, you requested about 12000 tokens (10000 of text input, 2000 in the output).",
      ),
      { window: 8192, input: 10000, requested: 12000 },
    );
  });

  it('returns the window with input undefined when only the window is stated', () => {
    assert.deepEqual(parseContextOverflow('input is longer than the maximum model length of 32768'), { window: 32768, input: undefined });
  });

  it('finds the message inside SDK strings and JSON bodies', () => {
    const body = JSON.stringify({
      error: {
        message:
          "This model's maximum context length is 2048 tokens. However, your request has 3000 input tokens. Please reduce the length of the input messages.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    });
    assert.deepEqual(parseContextOverflow(`400 ${body}`), { window: 2048, input: 3000 });
    assert.deepEqual(
      parseContextOverflow("400 This model\\'s maximum context length is 2048 tokens. However, your request has 2049 input tokens."),
      {
        window: 2048,
        input: 2049,
      },
    );
  });

  it('round-trips every wording the simulator can produce', () => {
    for (const w of ['current', 'early-2026', 'v0.10', 'legacy', 'v1-decoder'] as const) {
      const got = parseContextOverflow(overflowMessage(w, 1000, 1200, w === 'v1-decoder' ? undefined : 50));
      assert.ok(got, w);
      assert.equal(got.window, 1000, w);
      // The 2026 wordings say only that the prompt has at least window − max_tokens + 1 tokens.
      if (w === 'current' || w === 'early-2026') assert.deepEqual([got.input, got.inputAtLeast], [undefined, 951], w);
      else assert.equal(got.input, 1200, w);
    }
    // prompt fits but prompt + max_tokens does not (v0.10 wording switches sentence)
    assert.deepEqual(parseContextOverflow(overflowMessage('v0.10', 1000, 900, 200)), { window: 1000, input: 900, requested: 1100 });
  });

  it("the loop's check carries the server's floor from a typed error and from its text alike", () => {
    const text =
      "This model's maximum context length is 1000 tokens. However, you requested 50 output tokens and your prompt contains at least 951 input tokens.";
    assert.deepEqual(isOverflow(new ContextOverflowError(text, { window: 1000, input: undefined, inputAtLeast: 951 })), {
      window: 1000,
      input: undefined,
      inputAtLeast: 951,
    });
    assert.deepEqual(isOverflow(new Error(text)), { window: 1000, input: undefined, inputAtLeast: 951 });
  });

  it('does not match unrelated errors', () => {
    for (const m of [
      '',
      'The model `foo` does not exist.',
      '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      'Rate limit exceeded, retry in 20 seconds',
      'max_tokens must be at least 1, got 0.',
    ]) {
      assert.equal(parseContextOverflow(m), undefined, m);
    }
  });
});
