import type { SplitpointSettings } from '../core/config/settings';
import { elapsedNow, systemClock } from '../core/session/storage';
import type { ModelPort, ModelRequest, ModelResult } from '../core/ports';
import { VllmClient, limiterFor, normalizeBaseURL } from '../llm';
import type { Semaphore } from '../llm';
import type { Neighbours, TimingSink } from '../llm/timing';
import { TimedModel } from '../llm/timing';
import { compactorOnAgentServer, modelChoice } from './agentSettings';
import { keysFor, type RoleKeys } from './apiKeys';
import type { HostLog } from './log';
import { redactSecrets } from '../llm/redact';

/**
 * Told how each request to the server the side bar's connection line names ended, so the line follows what requests
 * find (ServerConnection). `started` stamps a request as it goes out; the stamp comes back with its outcome.
 */
export interface ReachSink {
  started(): number;
  /** `err` undefined: the server answered. */
  settled(stamp: number, err?: unknown): void;
}

/**
 * The model ports the agent loop uses, built from the settings and the API
 * key. Every call goes through LoggedModel, which gives it a request id and
 * logs model, sizes, timing and token usage, never message contents or keys.
 */
export class LoggedModel implements ModelPort {
  /** The last failure, so the host can turn the loop's error text back into an actionable message. */
  lastError: unknown;

  constructor(
    private readonly inner: ModelPort,
    private readonly role: 'agent' | 'compactor' | 'judge',
    private readonly log: HostLog,
    private readonly seq: { n: number },
    private readonly secrets: readonly string[],
    private readonly reach?: ReachSink,
  ) {}

  async chat(req: ModelRequest, opts?: Parameters<ModelPort['chat']>[1]): Promise<ModelResult> {
    const id = `${this.role}#${++this.seq.n}`;
    const started = elapsedNow(systemClock);
    const sizes = `messages=${req.messages.length} tools=${req.tools?.length ?? 0} max_tokens=${req.maxTokens ?? '-'}`;
    this.log.debug(`→ ${id} model=${req.model ?? '(default)'} ${sizes}`);
    const stamp = this.reach?.started() ?? 0;
    try {
      const r = await this.inner.chat(req, opts);
      this.reach?.settled(stamp);
      const u = r.usage;
      // A compaction's workers would write dozens of these per compaction, on the host's thread; its own line
      // ("preview … ready", with requests and cached tokens) sums them up, so theirs are for debugging.
      this.log[this.role === 'compactor' ? 'debug' : 'info'](
        `← ${id} ${elapsedNow(systemClock) - started} ms` +
          (u ? ` prompt=${u.promptTokens} cached=${u.cachedTokens ?? '?'} completion=${u.completionTokens}` : ' (no usage reported)') +
          ` finish=${r.finishReason ?? '-'}${r.message.tool_calls?.length ? ` tool_calls=${r.message.tool_calls.length}` : ''}`,
      );
      return r;
    } catch (err) {
      this.lastError = err;
      this.reach?.settled(stamp, err);
      const kind = (err as { kind?: string }).kind ?? (err as Error).name;
      if (kind === 'aborted' || opts?.signal?.aborted) this.log.debug(`✗ ${id} cancelled after ${elapsedNow(systemClock) - started} ms`);
      else
        this.log.warn(
          `✗ ${id} ${elapsedNow(systemClock) - started} ms ${kind}: ${redactSecrets((err as Error).message ?? String(err), this.secrets)}`,
        );
      throw err;
    }
  }
}

/**
 * Counts the requests made through the ports it wraps, for the agent's timings: a judge call or a compaction worker
 * on the agent's server makes the agent's request share a batch, whether or not a limiter holds it.
 */
class RequestCount {
  running = 0;
  started = 0;

  port(inner: ModelPort): ModelPort {
    return {
      chat: async (req, opts) => {
        this.running++;
        this.started++;
        try {
          return await inner.chat(req, opts);
        } finally {
          this.running--;
        }
      },
    };
  }
}

export interface Endpoints {
  /** The agent's client, also used for /v1/models and the window. */
  client: VllmClient;
  agent: LoggedModel;
  compactor: LoggedModel;
  judge: LoggedModel;
  compactorLimiter: Semaphore;
  /** splitpoint.compaction.endpoints: replicas of the compactor's model, each with its own limiter and the compactor's key. */
  replicas: { model: LoggedModel; limiter: Semaphore; baseURL: string }[];
  /** Server roots (no /v1) of the compaction endpoints, the compactor's first: where their /metrics are. */
  compactionRoots: string[];
}

/** `keys`: the agent's key alone (a string), or a key per role (compactor and judge on servers of their own). */
/** `learn`: where the agent's own request timings go (the planner's learned profile); only when the agent is alone on the server. */
/** `transport`: the clients' fetch when it is not the shared one (a CA file to trust, serverTrust.ts). */
/** `othersOnServer`: other clients' sequences last seen on the compactor's server (ServerLoadMonitor); 0 when unknown. */
/** `reach`: told the outcome of every request, whatever its role, to the agent's server (the one the connection line names). */
export function buildEndpoints(
  s: SplitpointSettings,
  keys: string | undefined | RoleKeys,
  log: HostLog,
  onToolFallback: (reason: string) => void,
  learn?: TimingSink,
  transport?: typeof fetch,
  othersOnServer: () => number = () => 0,
  reach?: ReachSink,
): Endpoints {
  const seq = { n: 0 };
  const byRole = keysFor(s, typeof keys === 'object' ? keys : keys ? { agent: keys } : {});
  const secrets = [...new Set(Object.values(byRole).filter((k): k is string => !!k))];
  const make = (baseURL: string, model: string | undefined, apiKey: string | undefined) =>
    new VllmClient({
      baseURL,
      ...(apiKey ? { apiKey } : {}),
      ...(model ? { model } : {}),
      timeoutMs: s.requestTimeoutSeconds * 1000,
      ...(transport ? { fetch: transport } : {}),
      onRetry: (info) => log.warn(`retrying ${baseURL}: ${redactSecrets(JSON.stringify(info).slice(0, 300), secrets)}`),
      onToolProtocolFallback: ({ reason }) => onToolFallback(reason),
    });
  const client = make(s.endpoint, s.model, byRole.agent);
  const compactorURL = s.compactor.endpoint ?? s.endpoint;
  const compactorModel = modelChoice(s).compactor;
  const compactorLimiter = limiterFor(compactorURL, s.maxConcurrency);
  // Compaction workers on the agent's server make its timings those of a shared batch, not of the agent alone.
  const sameServer = compactorOnAgentServer(s);
  const compactorClient = s.compactor.endpoint ? make(s.compactor.endpoint, s.compactor.model, byRole.compactor) : client;
  const judgeURL = s.judgeEndpoint.endpoint ?? compactorURL;
  const judgeClient = s.judgeEndpoint.endpoint ? make(s.judgeEndpoint.endpoint, s.judgeEndpoint.model, byRole.judge) : compactorClient;
  const replicaClients = s.compactionEndpoints
    .filter((url) => normalizeBaseURL(url) !== normalizeBaseURL(compactorURL))
    .map((url) => ({ url, client: make(url, compactorModel, byRole.compactor) }));
  // Our own requests on the agent's server, whichever role sends them; the judge's have no limiter to count them.
  const ours = new RequestCount();
  const counted = (url: string, port: ModelPort) =>
    learn && normalizeBaseURL(url) === normalizeBaseURL(s.endpoint) ? ours.port(port) : port;
  // Alone means without our workers and judge calls and without other clients' requests: the planner counts them
  // apart, so a profile learned among them would count them twice.
  const neighbours: Neighbours = {
    running: () => ours.running + (sameServer ? compactorLimiter.inFlight + othersOnServer() : 0),
    started: () => ours.started,
  };
  // Another server's outcomes would make the line flap between what each server does.
  const reachOf = (url: string) => (normalizeBaseURL(url) === normalizeBaseURL(s.endpoint) ? reach : undefined);
  return {
    client,
    agent: new LoggedModel(learn ? new TimedModel(client, learn, neighbours) : client, 'agent', log, seq, secrets, reach),
    compactor: new LoggedModel(counted(compactorURL, compactorClient), 'compactor', log, seq, secrets, reachOf(compactorURL)),
    judge: new LoggedModel(counted(judgeURL, judgeClient), 'judge', log, seq, secrets, reachOf(judgeURL)),
    compactorLimiter,
    replicas: replicaClients.map(({ url, client: c }) => ({
      model: new LoggedModel(counted(url, c), 'compactor', log, seq, secrets, reachOf(url)),
      limiter: limiterFor(url, s.maxConcurrency),
      baseURL: url,
    })),
    compactionRoots: [compactorClient.root, ...replicaClients.map((r) => r.client.root)],
  };
}
