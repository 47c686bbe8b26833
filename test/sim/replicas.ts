/**
 * Several independent simulators (own scheduler, prefix cache and clock
 * each) on consecutive ports, as vLLM replicas behind a router.
 */
import { startSimulator, type SimHandle, type SimOptions } from './server';

/**
 * Starts `n` replicas on ports port, port+1, …; with port 0 (default) the
 * first gets a free port and the set is retried from another free port when a
 * following one is taken.
 */
export async function startReplicas(n: number, opts: SimOptions = {}): Promise<SimHandle[]> {
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`replicas must be a positive integer, got ${n}`);
  const fixed = opts.port !== undefined && opts.port !== 0;
  for (let attempt = 0; attempt < (fixed ? 1 : 20); attempt++) {
    const started: SimHandle[] = [];
    try {
      const first = await startSimulator({ ...opts, port: opts.port ?? 0 });
      started.push(first);
      for (let i = 1; i < n; i++) started.push(await startSimulator({ ...opts, port: first.port + i }));
      return started;
    } catch (e) {
      await Promise.all(started.map((s) => s.close()));
      if (fixed || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
  throw new Error(`could not find ${n} consecutive free ports`);
}
