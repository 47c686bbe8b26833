/**
 * Worker thread that counts tokens off the extension host's thread (bundled
 * as dist/countWorker.js). It loads the tokenizer once and answers batches:
 * { id, messages } → { id, counts } with one count per message, in order.
 */
import { parentPort } from 'node:worker_threads';
import type { ChatMessage } from '../core/messages';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';

export interface CountRequest {
  id: number;
  messages: ChatMessage[];
}

export type CountReply = { id: number; counts: number[] } | { id: number; error: string };

const port = parentPort;
if (port) {
  port.on('message', (req: CountRequest) => {
    loadTiktokenCounter()
      .then((counter) => port.postMessage({ id: req.id, counts: req.messages.map((m) => counter.countMessage(m)) } satisfies CountReply))
      .catch((err: unknown) => port.postMessage({ id: req.id, error: (err as Error).message } satisfies CountReply));
  });
}
