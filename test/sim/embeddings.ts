/**
 * POST /v1/embeddings, vLLM's OpenAI shape. The vector is a hashed bag of
 * words (log term frequency, L2-normalised): deterministic, and two texts
 * that share their words point the same way, which is what the stability
 * metric (cosine between two runs' summaries) needs from a stand-in.
 */
import type { ServerResponse } from 'node:http';
import type { SimContext } from './context';
import { sendJson } from './http';

export const EMBEDDING_DIMS = 256;

function hash(word: string): number {
  // FNV-1a, 32 bit.
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function embed(text: string, dims = EMBEDDING_DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  const counts = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}_./-]+/gu) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  for (const [w, n] of counts) {
    const h = hash(w);
    // The sign bit spreads collisions around zero instead of piling them up.
    v[h % dims]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(n));
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

export function handleEmbeddings(ctx: SimContext, res: ServerResponse, body: Record<string, unknown>): void {
  if (body.model !== undefined && body.model !== ctx.model)
    return ctx.sendError(res, 404, `The model \`${String(body.model)}\` does not exist.`);
  const input = body.input;
  const texts =
    typeof input === 'string'
      ? [input]
      : Array.isArray(input) && input.every((x) => typeof x === 'string')
        ? (input as string[])
        : undefined;
  if (!texts || texts.length === 0) return ctx.sendError(res, 400, 'input: a string or a non-empty list of strings is required');
  const tokens = texts.reduce((s, t) => s + ctx.count(t), 0);
  sendJson(res, 200, {
    object: 'list',
    model: ctx.model,
    data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
