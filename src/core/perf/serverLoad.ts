import { formatTokens } from '../tokens/formatTokens';

/**
 * Work other clients have on a server when a compaction is planned. A vLLM
 * server is often shared (a team's GPU, a router in front of replicas): its
 * running sequences take seats in the batch (max-num-seqs) and decode tokens
 * from every step's budget, and their KV lengthens every decode step. The
 * planner's step model runs them alongside the workers for the whole run, as
 * if the load held steady, which is the best guess one reading allows.
 */
export interface ServerLoad {
  /** Sequences running on the server besides this client's. */
  sequences: number;
  /** KV tokens they hold. */
  kvTokens: number;
  /**
   * Requests waiting for a seat or for KV (vllm:num_requests_waiting). vLLM admits in arrival order, so they run
   * before any worker sent after the reading; the step model counts them as running, each with the running ones'
   * average KV. Absent: none, or the server does not say.
   */
  waiting?: number;
  /**
   * A data-parallel server's engines, each with its own batch and KV: the load above is then one engine's, the mean
   * over them, and the step model plans on one engine (the workers spread over the others is not modelled).
   */
  engines?: number;
}

/** Other clients' sequences the step model runs beside the workers: the running ones and the ones queued ahead. */
export function otherSequences(l: ServerLoad | null | undefined): number {
  return l ? l.sequences + (l.waiting ?? 0) : 0;
}

/** Whether a load changes anything the step model sees. */
export function isLoaded(l: ServerLoad | null | undefined): l is ServerLoad {
  return otherSequences(l) > 0;
}

/** "12 other requests running, 310K KV tokens" (", 3 waiting" with a queue; "per engine of 2, …"): the load as the plan shows it. */
function describeLoad(l: ServerLoad): string {
  const queue = l.waiting ? `, ${l.waiting} waiting` : '';
  const per = l.engines && l.engines > 1 ? `per engine of ${l.engines}, ` : '';
  return `${per}${l.sequences} other request${l.sequences === 1 ? '' : 's'} running, ${formatTokens(l.kvTokens)} KV tokens${queue}`;
}

/**
 * What a plan counted on, for the views: "the server: 12 other requests running, 310K KV tokens", each endpoint
 * named when there are several; undefined when every server was idle or not known.
 */
export function describeLoads(loads: readonly (ServerLoad | null | undefined)[] | undefined): string | undefined {
  if (!loads?.some(isLoaded)) return undefined;
  const one = (l: ServerLoad | null | undefined) => (isLoaded(l) ? describeLoad(l) : 'idle or not known');
  return loads.length === 1 ? `the server: ${one(loads[0])}` : loads.map((l, i) => `endpoint ${i + 1}: ${one(l)}`).join('; ');
}
