/** GET /v1/models → model ids and their context windows (vLLM's max_model_len). */
import type { ModelInfo } from './types';

export function modelInfoFromRaw(raw: unknown): ModelInfo | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  if (typeof o.id !== 'string') return undefined;
  const len = o.max_model_len ?? o.context_length ?? o.max_context_length;
  return {
    id: o.id,
    maxModelLen: typeof len === 'number' && Number.isFinite(len) && len > 0 ? len : undefined,
    ...(typeof o.owned_by === 'string' ? { ownedBy: o.owned_by } : {}),
  };
}

/**
 * Parses a /v1/models body ({"object":"list","data":[...]}), skipping malformed entries. vLLM lists a LoRA adapter
 * without max_model_len (null) and names its base model in `parent`: the adapter's window is its base model's.
 */
export function parseModelList(body: unknown): ModelInfo[] {
  const data = body && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) return [];
  const listed = data.flatMap((raw) => {
    const info = modelInfoFromRaw(raw);
    if (!info) return [];
    const parent = (raw as { parent?: unknown }).parent;
    return [{ info, parent: typeof parent === 'string' ? parent : undefined }];
  });
  const windows = new Map(listed.map(({ info }) => [info.id, info.maxModelLen]));
  return listed.map(({ info, parent }) =>
    info.maxModelLen === undefined && parent !== undefined ? { ...info, maxModelLen: windows.get(parent) } : info,
  );
}
