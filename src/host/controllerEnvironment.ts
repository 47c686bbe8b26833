import type { SplitpointSettings } from '../core/config/settings';
import type { WorkerEndpoint } from '../core/compaction/workerRun';
import type { PerfProfile } from '../core/perf/profile';
import type { LimiterPort, ModelPort } from '../core/ports';
import type { ServerLoadMonitor } from './serverLoadMonitor';

/** What may change while a session is open (settings, key, server window). */
export interface ControllerEnvironment {
  settings: SplitpointSettings;
  contextWindow: number;
  agent: ModelPort;
  compactor: ModelPort;
  compactorLimiter: LimiterPort;
  judge: ModelPort;
  /** splitpoint.compaction.endpoints as clients: target-block workers spread over them and the compactor. */
  replicas?: readonly WorkerEndpoint[];
  /** The planner's performance profile (setting, else learned for the endpoint, else h100-7b), read at each compaction. */
  profile?: () => PerfProfile;
  /** Other clients' work on the compaction servers: the latest reading, or a fresh one for a user's compaction. */
  serverLoad?: Pick<ServerLoadMonitor, 'latest' | 'read'>;
  /** The server refused a request as longer than its smaller window: remembered for the server (and its other sessions). */
  correctWindow?: (window: number) => void;
}

/** The environment with the server's window when a context-length refusal showed it is smaller. */
export function withWindow(env: ControllerEnvironment, window: number): ControllerEnvironment {
  return window < env.contextWindow ? { ...env, contextWindow: window } : env;
}
