/** GET /v1/models as vLLM answers it: a base model's window, and a LoRA adapter's, which vLLM leaves out. */
import assert from 'node:assert/strict';
import { parseModelList } from '../../src/llm/models';

describe('the model list', () => {
  it("gives a LoRA adapter its base model's window (vLLM lists it with max_model_len null and the base as parent)", () => {
    const models = parseModelList({
      object: 'list',
      data: [
        { id: 'qwen-coder', object: 'model', owned_by: 'vllm', root: 'Qwen/Qwen2.5-Coder-7B', parent: null, max_model_len: 32768 },
        { id: 'my-lora', object: 'model', owned_by: 'vllm', root: '/adapters/my-lora', parent: 'qwen-coder', max_model_len: null },
        { id: 'orphan-lora', object: 'model', root: '/adapters/x', parent: 'not-listed', max_model_len: null },
        { object: 'model' },
      ],
    });
    assert.deepEqual(
      models.map((m) => [m.id, m.maxModelLen]),
      [
        ['qwen-coder', 32768],
        ['my-lora', 32768],
        ['orphan-lora', undefined],
      ],
    );
  });
});
