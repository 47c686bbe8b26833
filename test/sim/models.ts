/** The /v1/models body, as vLLM's ModelList / ModelCard. */
import { randomUUID } from 'node:crypto';

export function modelsBody(model: string, maxModelLen: number) {
  const now = Math.floor(Date.now() / 1000);
  return {
    object: 'list',
    data: [
      {
        id: model,
        object: 'model',
        created: now,
        owned_by: 'vllm',
        root: model,
        parent: null,
        max_model_len: maxModelLen,
        permission: [
          {
            id: `modelperm-${randomUUID().replace(/-/g, '')}`,
            object: 'model_permission',
            created: now,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  };
}
