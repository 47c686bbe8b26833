import type { ClientRequest } from 'node:http';

/**
 * Origins that an editor's proxy support has just resolved to a direct
 * connection. In VS Code every http.request goes through its proxy support,
 * which on each call reads the http settings twice (about 200 KB of garbage
 * per request in the extension host) and, for any host but localhost, swaps
 * in an agent of its own and resolves the proxy again. The agent it swaps in
 * (@vscode/proxy-agent) says on the request what it decided, with a 'proxy'
 * event; once that was DIRECT for an origin, the paced transport sends
 * plain-http requests to that origin past the proxy support for a while,
 * with its own keep-alive agent, which is what a DIRECT decision amounts to.
 * Without that event (the CLI, another editor, proxy support off) nothing is
 * learned and every request goes through as before. The decision is asked
 * again after `ttlMs`, so a proxy setting that changes takes effect within
 * it.
 */
export class DirectRoutes {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a request to `origin` may skip the proxy support now. */
  isDirect(origin: string): boolean {
    const t = this.until.get(origin);
    if (t === undefined) return false;
    if (t > this.now()) return true;
    this.until.delete(origin);
    return false;
  }

  /** Learns from the proxy support's decision for `req`, if it reports one. */
  observe(req: ClientRequest, origin: string): void {
    req.once('proxy', (e: { proxy?: unknown; error?: unknown } | undefined) => {
      if (e?.proxy === 'DIRECT' && e.error === undefined) this.until.set(origin, this.now() + this.ttlMs);
      else this.until.delete(origin);
    });
  }

  /** Origins that go direct now (tests). */
  get size(): number {
    return [...this.until.keys()].filter((o) => this.isDirect(o)).length;
  }
}
