/** POST /tokenize, as vLLM's: chat form or prompt form. */
import type { ServerResponse } from 'node:http';
import type { SimContext } from './context';
import type { SimFault } from './faults';
import { sendJson } from './http';
import { renderTokens, type WireMessage, type WireTool } from './template';

export function handleTokenize(ctx: SimContext, res: ServerResponse, body: Record<string, unknown>, fault: SimFault | undefined): void {
  if (ctx.opts.tokenizeRoute === false || fault?.tokenize404) return sendJson(res, 404, { detail: 'Not Found' });
  if (body.model !== undefined && body.model !== ctx.model)
    return ctx.sendError(res, 404, `The model \`${String(body.model)}\` does not exist.`);
  let tokens: number[];
  if (Array.isArray(body.messages)) {
    if (body.add_generation_prompt && body.continue_final_message) {
      return ctx.sendError(res, 400, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
    }
    const tools = (Array.isArray(body.tools) ? body.tools : []) as WireTool[];
    tokens = renderTokens(ctx.tokenizer, body.messages as WireMessage[], tools, body.add_generation_prompt !== false);
  } else if (typeof body.prompt === 'string') {
    tokens = ctx.tokenizer.encode(body.prompt);
  } else {
    return ctx.sendError(res, 400, 'Either messages or prompt is required');
  }
  sendJson(res, 200, { count: tokens.length, max_model_len: ctx.maxModelLen, tokens, token_strs: null });
}
