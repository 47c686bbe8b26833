/** What the route handlers of one simulator instance share. */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FaultQueue } from './faults';
import type { SimOptions } from './options';
import type { Replier } from './replies';
import type { Scheduler } from './scheduler';
import type { RequestRecord, SimStats } from './stats';
import type { SimTokenizer } from './tokenizer';
import type { ErrorShape } from './vllmErrors';

export interface SimContext {
  readonly opts: SimOptions;
  readonly model: string;
  readonly maxModelLen: number;
  readonly tokenizer: SimTokenizer;
  readonly stats: SimStats;
  readonly errorShape: ErrorShape;
  readonly reasoningField: 'reasoning' | 'reasoning_content';
  readonly replier: Replier;
  readonly faults: FaultQueue;
  readonly log: (line: string) => void;
  /** The current scheduler (resetCache swaps it, with a new prefix cache). */
  scheduler(): Scheduler;
  count(text: string): number;
  setLastChatBody(body: Record<string, unknown>): void;
  sendError(res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void;
  /** Marks record.socketClosed when the connection that carried it closes. */
  watchSocket(socket: Socket, record: RequestRecord, res?: ServerResponse): void;
  metricsText(): string;
  clockJson(): unknown;
}
