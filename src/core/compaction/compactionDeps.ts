import type { ChatMessage } from '../messages';
import type { LimiterPort, ModelPort } from '../ports';
import type { Clock, IdSource } from '../session/storage';
import type { WorkerEndpoint } from './workerRun';

/** What a compaction needs from outside: the model and its limiter, a token estimate, a clock and ids. */
export interface CompactionDeps {
  model: ModelPort;
  limiter: LimiterPort;
  /** Local token estimate of a message. */
  count: (m: ChatMessage) => number;
  clock: Clock;
  ids: IdSource;
  /** More compaction endpoints (replicas) besides `model`; target-block workers spread over all by load. */
  replicas?: readonly WorkerEndpoint[];
  /** Whether anyone sees the workers' progress now (a view showing it); unset: always. Streams are read less often when not. */
  watched?: () => boolean;
}
