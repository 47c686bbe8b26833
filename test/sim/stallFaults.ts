import type { ServerResponse } from 'node:http';
import type { SimFault } from './faults';

/**
 * Faults that test the client's clocks and reply cap rather than its error
 * handling: a server that streams tokens forever, one that sends only SSE
 * keep-alive comments, and one whose reply is megabytes long. They answer
 * before the model runs, so they cost the simulator nothing but the bytes.
 */
export function isStallFault(f: SimFault): boolean {
  return f.endless === true || f.commentsOnly === true || (f.hugeReplyBytes ?? 0) > 0;
}

export async function serveStallFault(
  res: ServerResponse,
  f: SimFault,
  model: string,
  streaming: boolean,
  onEnd: (clientClosed: boolean) => void,
): Promise<void> {
  let closed = false;
  res.on('close', () => {
    closed = !res.writableFinished;
    if (closed) onEnd(true);
  });
  const base = { id: 'chatcmpl-stall', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const huge = f.hugeReplyBytes ?? 0;
  if (huge > 0 && !streaming) {
    const body = JSON.stringify({
      id: 'chatcmpl-huge',
      object: 'chat.completion',
      created: base.created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(huge) }, finish_reason: 'stop' }],
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    onEnd(false);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(chunk({ role: 'assistant', content: '' }));
  if (huge > 0) {
    const piece = 'x'.repeat(64 * 1024);
    for (let sent = 0; sent < huge && !closed; sent += piece.length) {
      if (!res.write(chunk({ content: piece }))) await new Promise((r) => res.once('drain', r));
    }
    if (!closed) {
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
      onEnd(false);
    }
    return;
  }
  while (!closed && !res.destroyed) {
    res.write(f.endless ? chunk({ content: 'more ' }) : ': keep-alive\n\n');
    await tick();
  }
}
