import type { ModelPort } from '../core/ports';
import type { ServerLoad } from '../core/perf/serverLoad';
import { ServerLoadReader } from '../llm/serverLoadReader';

/** Readings for the agent loop's compactions are taken at most this often. */
const REFRESH_EVERY_MS = 15_000;

/**
 * Keeps a recent reading of the compaction servers' load for the planner. A
 * user's compaction awaits a fresh one (`read`, at most a second). The agent
 * loop's compactions start where nothing can be awaited, so the monitor reads
 * in the background as the agent sends a request (its own is then not on the
 * server yet; the planner counts the live agent apart) and they plan on the
 * latest. It does not read while this extension's own compaction workers run:
 * they would count as someone else's load.
 */
export class ServerLoadMonitor {
  private readonly reader: ServerLoadReader;

  constructor(
    roots: () => readonly string[],
    capacityTokens: () => number,
    /** Whether any of this extension's compaction workers is in flight. */
    private readonly compacting: () => boolean,
    fetchFn: typeof fetch,
    now: () => number = Date.now,
  ) {
    this.reader = new ServerLoadReader(roots, capacityTokens, fetchFn, now);
  }

  /** A fresh reading of every compaction endpoint. */
  read(): Promise<(ServerLoad | undefined)[]> {
    return this.reader.read();
  }

  /** The latest reading, when recent. */
  latest(): (ServerLoad | undefined)[] | undefined {
    return this.reader.latest();
  }

  /** Starts a reading when the last is older than REFRESH_EVERY_MS and no compaction worker of ours runs. */
  refreshSoon(): void {
    if (this.compacting() || this.reader.age() < REFRESH_EVERY_MS) return;
    void this.reader.read();
  }

  /** The agent's port, reading the load as each of its requests starts. */
  watching(agent: ModelPort): ModelPort {
    return {
      chat: (req, opts) => {
        this.refreshSoon();
        return agent.chat(req, opts);
      },
    };
  }
}
