import type { ModelPort } from '../core/ports';
import type { ServerLoad } from '../core/perf/serverLoad';
import { readServerLoads } from '../llm/vllmMetrics';

/** Readings for the agent loop's compactions are taken at most this often. */
const REFRESH_EVERY_MS = 15_000;
/** A reading older than this is not planned on: a shared server's load changes within minutes. */
const MAX_AGE_MS = 60_000;

/**
 * Keeps a recent reading of the compaction servers' load for the planner. A
 * user's compaction awaits a fresh one (`read`, at most a second). The agent
 * loop's compactions start where nothing can be awaited, so the monitor reads
 * in the background as the agent sends a request (its own is then not on the
 * server yet; the planner counts the live agent apart) and they plan on the
 * latest. It does not read while this extension's own compaction workers run:
 * they would count as someone else's load. One monitor lives as long as the
 * host's server connection; when the endpoints change, what it knew of the
 * old ones (the reading, servers without /metrics) is forgotten.
 */
export class ServerLoadMonitor {
  private readonly missing = new Set<string>();
  /** The latest reading, of the endpoints `rootsKey` names. */
  private last: { at: number; loads: (ServerLoad | undefined)[] } | undefined;
  private reading: Promise<(ServerLoad | undefined)[]> | undefined;
  private rootsKey = '';

  constructor(
    /** Server roots (no /v1) of the compaction endpoints, the agent's first. */
    private readonly roots: () => readonly string[],
    /** KV capacity in tokens when a server does not export it (the profile's). */
    private readonly capacityTokens: () => number,
    /** Whether any of this extension's compaction workers is in flight. */
    private readonly compacting: () => boolean,
    private readonly fetchFn: () => typeof fetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** A fresh reading of every compaction endpoint (one at a time; a caller during one shares it). */
  read(): Promise<(ServerLoad | undefined)[]> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The latest reading, when recent and of the current endpoints. */
  latest(): (ServerLoad | undefined)[] | undefined {
    this.forgetIfMoved(this.roots());
    const l = this.last;
    return l && this.now() - l.at <= MAX_AGE_MS ? l.loads : undefined;
  }

  /** Starts a reading when the last is older than REFRESH_EVERY_MS and no compaction worker of ours runs. */
  refreshSoon(): void {
    if (this.compacting() || (this.last && this.now() - this.last.at < REFRESH_EVERY_MS)) return;
    void this.read();
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

  private async readAll(): Promise<(ServerLoad | undefined)[]> {
    const roots = this.roots();
    this.forgetIfMoved(roots);
    const key = this.rootsKey;
    const loads = await readServerLoads(roots, this.capacityTokens, { fetchFn: this.fetchFn(), missing: this.missing });
    // The endpoints may have changed while it read: a reading of the old ones is not kept.
    if (key === this.rootsKey) this.last = { at: this.now(), loads };
    return loads;
  }

  /** Other endpoints than before: what was known of the old ones (the reading, servers without /metrics) is dropped. */
  private forgetIfMoved(roots: readonly string[]): void {
    const key = roots.join(' ');
    if (key === this.rootsKey) return;
    this.rootsKey = key;
    this.missing.clear();
    this.last = undefined;
  }
}
