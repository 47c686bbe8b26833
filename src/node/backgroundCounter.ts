import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChatMessage } from '../core/messages';
import { toWire } from '../core/messages';
import type { SessionStore } from '../core/session/sessionStore';
import { COUNTER_ID } from '../core/tokens/bpeCounter';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import type { CountReply, CountRequest } from './countWorker';

/** Text sent to the worker per message batch: structured cloning it holds the host's thread about 1 ms per 256 KB. */
const BATCH_CHARS = 256 * 1024;

/**
 * Counts tokens on a worker thread so that opening a large session never
 * holds the extension host's thread: the host only splits the work into
 * batches and applies the counts. When no worker can be started it counts
 * here, one message at a time with a pause between them (each message costs
 * at most a few tens of ms, see core/tokens/bpeCounter.ts).
 */
export class BackgroundCounter {
  private worker: Worker | undefined;
  private failed = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(counts: number[]): void; reject(err: Error): void }>();

  constructor(private readonly workerPath: string | undefined = defaultWorkerPath()) {}

  /** Local token counts of the messages, in order. */
  async count(messages: readonly ChatMessage[]): Promise<number[]> {
    const out: number[] = [];
    for (const batch of batches(messages)) out.push(...(await this.countBatch(batch)));
    return out;
  }

  /** Starts the worker and its tokenizer load now, so the first session opened does not wait for them. */
  warm(): void {
    const w = this.ensureWorker();
    if (!w) return;
    const id = this.nextId++;
    this.waiting.set(id, { resolve: () => undefined, reject: () => undefined });
    w.postMessage({ id, messages: [] } satisfies CountRequest);
  }

  /** Whether counting runs on a worker (false after the worker could not start). */
  get onWorker(): boolean {
    return !this.failed && this.workerPath !== undefined;
  }

  async dispose(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  private async countBatch(batch: ChatMessage[]): Promise<number[]> {
    const w = this.ensureWorker();
    if (!w) return countHere(batch);
    try {
      return await new Promise<number[]>((resolve, reject) => {
        const id = this.nextId++;
        this.waiting.set(id, { resolve, reject });
        w.postMessage({ id, messages: batch } satisfies CountRequest);
      });
    } catch {
      return countHere(batch);
    }
  }

  private ensureWorker(): Worker | undefined {
    if (this.worker || this.failed || !this.workerPath) return this.worker;
    const path = this.workerPath;
    // From sources (tests, benches under tsx) the worker needs tsx's loader; the bundle runs as is.
    const w = path.endsWith('.ts') ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(path)});`, { eval: true }) : new Worker(path);
    w.unref();
    w.on('message', (r: CountReply) => {
      const p = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if (!p) return;
      if ('counts' in r) p.resolve(r.counts);
      else p.reject(new Error(r.error));
    });
    const fail = (err: Error): void => {
      this.failed = true;
      this.worker = undefined;
      for (const p of this.waiting.values()) p.reject(err);
      this.waiting.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => {
      if (this.worker === w) fail(new Error(`the counting worker exited (code ${code})`));
    });
    this.worker = w;
    return w;
  }
}

/**
 * Fills in the token counts a session lacks (an imported session, messages
 * counted since the log last stored counts) on the background counter, and
 * stores them in the log so the next open counts nothing. Returns how many
 * messages were counted.
 */
export async function primeCounts(store: SessionStore, counter: BackgroundCounter): Promise<number> {
  const missing = store.uncounted();
  if (missing.length > 0) {
    const counts = await counter.count(missing.map(toWire));
    missing.forEach((m, i) => {
      if (m.tokens === undefined) m.tokens = counts[i]!;
    });
  }
  await store.persistCounts(COUNTER_ID);
  return missing.length;
}

function* batches(messages: readonly ChatMessage[]): Generator<ChatMessage[]> {
  let batch: ChatMessage[] = [];
  let chars = 0;
  for (const m of messages) {
    batch.push(m);
    chars +=
      (m.content?.length ?? 0) + (m.role === 'assistant' ? (m.tool_calls ?? []).reduce((n, c) => n + c.function.arguments.length, 0) : 0);
    if (chars >= BATCH_CHARS) {
      yield batch;
      batch = [];
      chars = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

async function countHere(batch: readonly ChatMessage[]): Promise<number[]> {
  const counter = await loadTiktokenCounter();
  const out: number[] = [];
  for (const m of batch) {
    out.push(counter.countMessage(m));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

/** dist/countWorker.js next to the bundle, or the source file when running from sources. */
function defaultWorkerPath(): string | undefined {
  for (const name of ['countWorker.js', 'countWorker.ts']) {
    const p = join(__dirname, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}
