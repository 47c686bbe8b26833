import type { ServerLoad } from '../core/perf/serverLoad';
import { parseVllmMetrics, serverLoadOf, LOAD_READ_TIMEOUT_MS } from './vllmMetrics';

/** A reading older than this is not planned on: a shared server's load changes within minutes. */
export const LOAD_MAX_AGE_MS = 60_000;

/**
 * Reads the load on each compaction endpoint from its /metrics for the
 * planner, and keeps the latest reading for compactions planned where nothing
 * can be awaited (the agent loop's). A server without /metrics (404: another
 * OpenAI-compatible server, or vLLM behind a gateway that serves only /v1) is
 * not asked again until the endpoints change.
 */
export class ServerLoadReader {
  private readonly missing = new Set<string>();
  private last: { at: number; roots: string; loads: (ServerLoad | undefined)[] } | undefined;
  private reading: Promise<(ServerLoad | undefined)[]> | undefined;

  constructor(
    /** Server roots (base URLs without /v1) of the compaction endpoints, the agent's first. */
    private readonly roots: () => readonly string[],
    /** KV capacity in tokens when a server does not export it (the profile's). */
    private readonly capacityTokens: () => number,
    private readonly fetchFn: typeof fetch = fetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads every endpoint now (one reading at a time; a caller during one shares it). */
  read(): Promise<(ServerLoad | undefined)[]> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The latest reading when it is recent and of the current endpoints; undefined otherwise. */
  latest(maxAgeMs = LOAD_MAX_AGE_MS): (ServerLoad | undefined)[] | undefined {
    const l = this.last;
    return l && l.roots === this.roots().join(' ') && this.now() - l.at <= maxAgeMs ? l.loads : undefined;
  }

  /** How old the latest reading is, in ms (Infinity when none). */
  age(): number {
    return this.last ? this.now() - this.last.at : Infinity;
  }

  private async readAll(): Promise<(ServerLoad | undefined)[]> {
    const roots = [...this.roots()];
    const capacity = this.capacityTokens();
    const loads = await Promise.all(roots.map((root) => this.readOne(root, capacity)));
    this.last = { at: this.now(), roots: roots.join(' '), loads };
    return loads;
  }

  private async readOne(root: string, capacity: number): Promise<ServerLoad | undefined> {
    if (this.missing.has(root)) return undefined;
    try {
      const res = await this.fetchFn(`${root}/metrics`, { signal: AbortSignal.timeout(LOAD_READ_TIMEOUT_MS) });
      if (res.status === 404) this.missing.add(root);
      if (!res.ok) return undefined;
      return serverLoadOf(parseVllmMetrics(await res.text()), capacity);
    } catch {
      return undefined;
    }
  }
}
