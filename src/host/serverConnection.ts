import * as vscode from 'vscode';
import { elapsedNow, systemClock } from '../core/session/storage';
import type { SplitpointSettings } from '../core/config/settings';
import type { ViewSnapshot } from '../protocol/messages';
import { readVscodeSettings } from './config';
import type { Endpoints, ReachSink } from './modelPorts';
import type { RoleKeys } from './apiKeys';
import { buildEndpoints } from './modelPorts';
import type { MementoLike } from '../core/perf/profileMemo';
import type { PerfProfile } from '../core/perf/profile';
import { PROFILE_SETTING, ProfileRefresher, resolveHostProfile } from './compactionProfile';
import type { ControllerEnvironment } from './controllerEnvironment';
import { describeFailure } from './userFacing';
import { CA_FILE_SETTING, ServerTrust } from './serverTrust';
import { ServerLoadMonitor } from './serverLoadMonitor';
import { otherSequences } from '../core/perf/serverLoad';

/** Used until the server reports max_model_len (or when it never does). */
const FALLBACK_WINDOW = 32_768;

export interface ServerConnectionHooks {
  log: vscode.LogOutputChannel;
  /** A warning for the view (e.g. the server has no tool-call parser). */
  warn(text: string): void;
  /**
   * The probe finished, or a request found the connection state changed: the environment (window) or the connection
   * state may have changed, and the view should hear of it now.
   */
  probed(): void;
  /** Where learned performance profiles are kept (the extension's globalState). */
  memo: MementoLike;
  /** Relative profile file paths in the settings resolve against it (the first workspace folder). */
  workspaceRoot(): string | undefined;
}

/**
 * The server side of the host: settings, the API key, the model clients built
 * from them, and what the server said about itself (models, window,
 * reachability). It probes the server only when asked (host start, settings
 * change, a message after a failed probe), never on activation.
 */
export class ServerConnection {
  settings: SplitpointSettings | undefined;
  endpoints: Endpoints | undefined;
  /** The compaction servers' load for the planner; it outlives setting changes and forgets on an endpoint change. */
  private readonly loadMonitor = new ServerLoadMonitor(
    () => this.endpoints?.compactionRoots ?? [],
    () => this.profile().kvCapacityTokens,
    () => !!this.endpoints && (this.endpoints.compactorLimiter.inFlight > 0 || this.endpoints.replicas.some((r) => r.limiter.inFlight > 0)),
    () => this.loadFetch,
  );
  /** The transport the load is read with: the one the clients use (a CA file to trust). */
  private loadFetch: typeof fetch = fetch;
  /** Per role; the compactor and the judge fall back to the agent's (see apiKeys.ts). */
  apiKeys: RoleKeys = {};
  private current: ViewSnapshot['connection'] = { state: 'unknown', message: null };
  /** The error shown is a connection failure, so an answer clears it (a missing model or a refused key it does not). */
  private answerClears = false;
  /** Counts state changes: a request's outcome counts only if it started after the last one. */
  private changes = 0;
  /** From the server's /v1/models, once known. */
  private serverWindow: number | undefined;
  /** From a context-length refusal: the server's real window when the setting or the probe said more. */
  private correctedWindow: number | undefined;
  private probing: Promise<void> | undefined;
  /** What each source of settings problems last showed (all its problems, one per line), so a set is shown once. */
  private readonly reported = new Map<'settings' | 'profile' | 'trust', string>();
  private readonly trust = new ServerTrust();

  constructor(private readonly hooks: ServerConnectionHooks) {}

  get connection(): ViewSnapshot['connection'] {
    return this.current;
  }

  /** `answerClears`: the error is a connection failure. The probe pushes its result itself (hooks.probed). */
  private setConnection(next: ViewSnapshot['connection'], answerClears = false, push = true): void {
    const prev = this.current;
    this.current = next;
    this.answerClears = next.state === 'error' && answerClears;
    if (prev.state !== next.state) this.changes++;
    if (push && (prev.state !== next.state || prev.message !== next.message)) this.hooks.probed();
  }

  /**
   * What every request to the agent's server found, whatever its role (compaction workers too), so the line does not
   * say ok while requests are refused. Only a change of state is pushed, and a request that started before the last
   * change (a worker sent while the server was up, answered as it went down) says nothing new, so parallel requests
   * do not make it flap. An answer after a connection failure probes once, which brings back the model and the window
   * (a restarted server may have a new one).
   */
  private readonly reach: ReachSink = {
    started: () => this.changes,
    settled: (stamp, err) => {
      if (stamp !== this.changes) return;
      if (err === undefined) {
        if (this.current.state === 'error' && this.answerClears) void this.probe();
      } else if (isUnreachable(err) && !(this.current.state === 'error' && this.answerClears)) {
        const message = describeFailure(err, (err as Error).message, this.settings?.endpoint ?? '').message;
        this.setConnection({ state: 'error', message }, true);
      }
    },
  };

  /** Reads the settings; problems are logged and shown once per distinct set. */
  loadSettings(): void {
    const { settings, problems } = readVscodeSettings();
    // Which server this window talks to, in the log: a start that read no settings shows the default here.
    if (settings.endpoint !== this.settings?.endpoint) this.hooks.log.info(`settings: endpoint ${withoutCredentials(settings.endpoint)}`);
    this.settings = settings;
    this.report('settings', problems, 'splitpoint');
  }

  rebuildEndpoints(): void {
    const s = this.settings!;
    const transport = this.trust.transport(s.caFile);
    this.report('trust', transport.problem ? [transport.problem] : [], CA_FILE_SETTING);
    const refresher = new ProfileRefresher(this.hooks.memo, s.endpoint, (m) => this.hooks.log.warn(m));
    this.endpoints = buildEndpoints(
      s,
      this.apiKeys,
      this.hooks.log,
      (reason) => {
        this.hooks.log.warn(`the server has no tool-call parser; using the text tool protocol (${reason.slice(0, 200)})`);
        this.hooks.warn(
          'The server was started without a tool-call parser, so Splitpoint describes tools in the prompt instead. ' +
            'For native tool calls start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>.',
        );
      },
      refresher,
      transport.fetch,
      () => otherSequences(this.loadMonitor.latest()?.[0]),
      this.reach,
    );
    this.loadFetch = transport.fetch ?? fetch;
  }

  dispose(): void {
    this.trust.dispose();
  }

  /**
   * Logs a source's settings problems and shows the first (with how many more) once, until the set changes or goes
   * away and comes back; Open Settings opens `setting`.
   */
  private report(source: 'settings' | 'profile' | 'trust', problems: readonly string[], setting: string): void {
    const key = problems.join('\n');
    if (problems.length > 0 && key !== this.reported.get(source)) {
      for (const p of problems) this.hooks.log.warn(`settings: ${p}`);
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more; see the log)` : '';
      void vscode.window.showWarningMessage(`Splitpoint: ${problems[0]}${more}`, 'Open Settings').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.action.openSettings', setting);
      });
    }
    this.reported.set(source, key);
  }

  contextWindow(): number {
    const configured = this.settings?.contextWindow ?? this.serverWindow ?? FALLBACK_WINDOW;
    return Math.min(configured, this.correctedWindow ?? Infinity);
  }

  /** A request was refused as longer than the server's window, which is smaller than the one in use. */
  correctWindow(window: number): void {
    this.correctedWindow = Math.min(window, this.correctedWindow ?? Infinity);
  }

  environment(): ControllerEnvironment {
    const e = this.endpoints!;
    const { compactor, compactorLimiter, judge, replicas } = e;
    this.profile(); // a bad profile setting is reported when the settings change, not at the first compaction
    const profile = () => this.profile();
    const serverLoad = this.loadMonitor;
    const agent = serverLoad.watching(e.agent);
    return {
      settings: this.settings!,
      contextWindow: this.contextWindow(),
      agent,
      compactor,
      compactorLimiter,
      judge,
      replicas,
      profile,
      serverLoad,
      correctWindow: (w) => this.correctWindow(w),
    };
  }

  /** Resolved at each compaction: the learned profile for the endpoint refreshes as the agent's requests are timed. */
  private profile(): PerfProfile {
    const s = this.settings!;
    const p = resolveHostProfile(s.perfProfile, s.compactor.endpoint ?? s.endpoint, this.hooks.memo, this.hooks.workspaceRoot());
    this.report('profile', p.problem ? [p.problem] : [], PROFILE_SETTING);
    return p.profile;
  }

  /** Settings changed: a new endpoint or model forgets what the old server said. True when it must be probed again. */
  reloadSettings(): boolean {
    const before = this.settings;
    this.loadSettings();
    // A window the user sets again is taken as said; the next refusal corrects it again if it is still too large.
    if (before?.contextWindow !== this.settings!.contextWindow) this.correctedWindow = undefined;
    const same = (a: SplitpointSettings, b: SplitpointSettings) =>
      a.endpoint === b.endpoint && a.model === b.model && a.caFile === b.caFile;
    if (!before || same(before, this.settings!)) return false;
    this.serverWindow = undefined;
    this.correctedWindow = undefined;
    this.setConnection({ state: 'unknown', message: null }, false, false);
    return true;
  }

  /** Asks the server for its models and window. */
  probe(): Promise<void> {
    this.probing ??= this.probeNow().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async probeNow(): Promise<void> {
    const e = this.endpoints;
    if (!e) return;
    const t0 = elapsedNow(systemClock);
    const log = this.hooks.log;
    try {
      const models = await e.client.listModels();
      const want = this.settings!.model;
      const chosen = want ? models.find((m) => m.id === want) : models[0];
      if (want && !chosen) {
        this.setConnection(
          { state: 'error', message: `The server lists no model "${want}" (it has: ${models.map((m) => m.id).join(', ') || 'none'}).` },
          false,
          false,
        );
      } else {
        const message = chosen ? `${chosen.id}${chosen.maxModelLen ? `, ${chosen.maxModelLen} tokens` : ''}` : null;
        this.setConnection({ state: 'ok', message, model: chosen?.id ?? null }, false, false);
        // A server restarted with another max length says so here; a correction learned from the old one goes.
        if (chosen?.maxModelLen !== this.serverWindow) this.correctedWindow = undefined;
        this.serverWindow = chosen?.maxModelLen;
      }
      log.info(
        `probe ${e.client.baseURL}: ${models.length} model(s) in ${elapsedNow(systemClock) - t0} ms; window ${this.serverWindow ?? 'not reported'}`,
      );
    } catch (err) {
      this.setConnection({ state: 'error', message: (err as Error).message }, (err as { kind?: string }).kind === 'connection', false);
      log.warn(`probe ${e.client.baseURL} failed after ${elapsedNow(systemClock) - t0} ms: ${(err as { kind?: string }).kind ?? 'error'}`);
    }
    this.hooks.probed();
  }

  /** Turns an agent error into an actionable notification, naming the setting or command that fixes it. */
  reportError(message: string): void {
    const last = this.endpoints?.agent.lastError ?? this.endpoints?.compactor.lastError;
    const related = last && message.includes((last as Error).message) ? last : undefined;
    const a = describeFailure(related, message, this.settings?.endpoint ?? '');
    if ((related as { kind?: string } | undefined)?.kind === 'connection') this.setConnection({ state: 'error', message: a.message }, true);
    void vscode.window.showErrorMessage(`Splitpoint: ${a.message}`, ...a.actions).then((choice) => {
      if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', a.settingsQuery ?? 'splitpoint');
      else if (choice === 'Set API Key') void vscode.commands.executeCommand('splitpoint.setApiKey');
      else if (choice === 'Select Model') void vscode.commands.executeCommand('splitpoint.selectModel');
      else if (choice === 'Show Log') this.hooks.log.show();
    });
  }
}

/** The client's ConnectionError when nothing answered (src/llm/errors.ts), matched by shape like userFacing.ts. */
function isUnreachable(err: unknown): boolean {
  const e = err as { kind?: unknown; unreachable?: unknown } | undefined;
  return e?.kind === 'connection' && e.unreachable === true;
}

/** A URL for the log, without a user name or password it may carry. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}
