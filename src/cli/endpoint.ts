import { VllmClient, limiterFor } from '../llm';
import type { Semaphore } from '../llm';
import { intOption, requireString } from './args';
import type { CliIO } from './io';

/** Options every command that talks to a server accepts. */
export const ENDPOINT_OPTIONS = {
  endpoint: { type: 'string' },
  model: { type: 'string' },
  window: { type: 'string' },
  concurrency: { type: 'string' },
  'request-timeout': { type: 'string' },
} as const;

/**
 * The help lines for ENDPOINT_OPTIONS. `concurrency: false` leaves out the
 * --concurrency line, for a command whose help gives its own default.
 */
export function endpointHelp(o: { concurrency?: boolean } = {}): string {
  return [
    `  --endpoint URL      OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (required)`,
    `  --model M           model id (default: the first one the server lists)`,
    `  --window N          context window in tokens (default: the server's max_model_len)`,
    ...(o.concurrency === false ? [] : [`  --concurrency N     compaction requests in flight at once (default 8)`]),
    `  --request-timeout S longest one model request may take (default 600); a begun reply's wait for its next token is 120 s, or this if shorter`,
    `  The API key, if the server needs one, is read from SPLITPOINT_API_KEY.`,
  ].join('\n');
}

export const ENDPOINT_HELP = endpointHelp();

export interface Endpoint {
  client: VllmClient;
  limiter: Semaphore;
  contextWindow: number;
  model: string | undefined;
}

type EndpointValues = { endpoint?: string | boolean; model?: string | boolean; window?: string | boolean; concurrency?: string | boolean };

export async function connect(values: EndpointValues & { 'request-timeout'?: string | boolean }, io: CliIO): Promise<Endpoint> {
  const baseURL = requireString(values.endpoint, '--endpoint');
  const model = typeof values.model === 'string' ? values.model : undefined;
  const apiKey = process.env.SPLITPOINT_API_KEY;
  const client = new VllmClient({
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    ...(model ? { model } : {}),
    timeoutMs: 1000 * intOption(values['request-timeout'], '--request-timeout', 600),
    onToolProtocolFallback: ({ reason }) => io.err(`note: the server has no tool-call parser (${reason}); using the text tool protocol.`),
  });
  const limiter = limiterFor(baseURL, intOption(values.concurrency, '--concurrency', 8));
  let contextWindow = values.window === undefined ? undefined : intOption(values.window, '--window', 0);
  if (contextWindow === undefined) {
    const models = await client.listModels();
    // A model the server does not serve would 404 on the first request; said here, with what it does serve.
    if (model && !models.some((m) => m.id === model)) {
      const served = models.map((m) => m.id).join(', ') || 'no model';
      throw new Error(
        `The server at ${baseURL} does not serve the model "${model}"; it serves: ${served}. Pass one of those with --model.`,
      );
    }
    contextWindow = (model ? models.find((m) => m.id === model) : models[0])?.maxModelLen;
    if (contextWindow === undefined) {
      contextWindow = 32_768;
      io.err('note: the server does not report max_model_len; assuming a 32768-token window (set --window).');
    }
  }
  return { client, limiter, contextWindow, model };
}
