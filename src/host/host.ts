import * as vscode from 'vscode';
import { agentSystemPrompt } from '../core/agent/systemPrompt';
import type { SettingsReport, SplitpointSettings } from '../core/config/settings';
import { SessionCorruptError } from '../core/session/errors';
import type { SessionStore } from '../core/session/sessionStore';
import { randomIds, systemClock } from '../core/session/storage';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { NodeFileStorage } from '../node/fileStorage';
import { fileSpill } from '../node/tools';
import type { HostToWebview, SessionListItem, ViewSnapshot, WebviewToHost } from '../protocol/messages';
import { CONTEXT_KEYS } from './commandTable';
import { readVscodeSettings, updateSetting } from './config';
import { DiffView } from './diffView';
import type { Endpoints } from './modelPorts';
import { buildEndpoints } from './modelPorts';
import { SessionController } from './sessionController';
import { SessionLibrary, titleFrom } from './sessionLibrary';
import type { SessionViewProvider } from './sessionViewProvider';
import { previewCall, vscodeWorkspaceTools } from './tools/workspaceTools';
import type { ToolEnv } from './tools/workspaceTools';
import { DEFAULT_COMMAND_ENV } from '../core/config/commandEnvDefaults';
import { describeFailure, gaugeStatus } from './userFacing';

export const API_KEY_SECRET = 'splitpoint.apiKey';
/** Used until the server reports max_model_len (or when it never does). */
const FALLBACK_WINDOW = 32_768;

/**
 * The extension's state across sessions: settings, the API key, model
 * clients, the session library, and the one open SessionController. It
 * starts lazily, on the first view `ready` or command, so activation loads
 * no tokenizer and makes no request.
 */
export class SplitpointHost implements vscode.Disposable {
  private controller: SessionController | undefined;
  private activeId: string | undefined;
  private starting: Promise<SessionController> | undefined;
  private library: SessionLibrary | undefined;
  private ledger: TokenLedger | undefined;
  private settings: SplitpointSettings | undefined;
  private endpoints: Endpoints | undefined;
  private apiKey: string | undefined;
  /** From the server's /v1/models, once known. */
  private serverWindow: number | undefined;
  private connection: ViewSnapshot['connection'] = { state: 'unknown', message: null };
  private probing: Promise<void> | undefined;
  private status: vscode.StatusBarItem | undefined;
  private diff: DiffView | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private reportedProblems = '';

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    readonly view: SessionViewProvider,
  ) {}

  // ------------------------------------------------------------ lifecycle

  /** The open session's controller, starting the host on first use. */
  ensureStarted(): Promise<SessionController> {
    if (this.controller) return Promise.resolve(this.controller);
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<SessionController> {
    const t0 = Date.now();
    this.wireOnce();
    this.loadSettings();
    this.apiKey = await this.context.secrets.get(API_KEY_SECRET);
    this.endpoints = this.makeEndpoints();
    // The tokenizer loads here, off the activation path, on first use of the view or a command.
    this.ledger = new TokenLedger(await loadTiktokenCounter());
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    this.library = new SessionLibrary(new NodeFileStorage(), vscode.Uri.joinPath(base, 'sessions').fsPath, systemClock, randomIds);
    const last = this.context.workspaceState.get<string>('splitpoint.lastSession');
    const entries = await this.library.list();
    const target = entries.find((e) => e.id === last) ?? entries[0];
    let controller: SessionController | undefined;
    if (target) controller = await this.tryOpen(target.id);
    controller ??= await this.openNew();
    this.log.info(`started in ${Date.now() - t0} ms: ${entries.length} session(s), storage ${this.library.dir}`);
    void this.probe();
    return controller;
  }

  /** Listeners and UI that only make sense once the host runs. */
  private wireOnce(): void {
    if (this.status) return;
    this.status = vscode.window.createStatusBarItem('splitpoint.gauge', vscode.StatusBarAlignment.Right, 100);
    this.status.name = 'Splitpoint context';
    this.status.command = 'splitpoint.open';
    this.diff = new DiffView();
    this.disposables.push(
      this.status,
      this.diff,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('splitpoint')) void this.settingsChanged();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log.info('workspace trusted: edits and commands are enabled');
        this.pushSnapshot();
      }),
      this.context.secrets.onDidChange(async (e) => {
        if (e.key !== API_KEY_SECRET) return;
        this.apiKey = await this.context.secrets.get(API_KEY_SECRET);
        this.rebuildEnvironment();
      }),
    );
  }

  private loadSettings(): void {
    const { settings, problems } = readVscodeSettings();
    this.settings = settings;
    const key = problems.join('\n');
    if (problems.length > 0 && key !== this.reportedProblems) {
      for (const p of problems) this.log.warn(`settings: ${p}`);
      void vscode.window.showWarningMessage(`Splitpoint: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more; see the log)` : ''}`, 'Open Settings').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.action.openSettings', 'splitpoint');
      });
    }
    this.reportedProblems = key;
  }

  private makeEndpoints(): Endpoints {
    return buildEndpoints(this.settings!, this.apiKey, this.log, (reason) => {
      this.log.warn(`the server has no tool-call parser; using the text tool protocol (${reason.slice(0, 200)})`);
      this.post({ type: 'notice', level: 'warning', text: 'The server was started without a tool-call parser, so Splitpoint describes tools in the prompt instead. For native tool calls start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>.' });
    });
  }

  private contextWindow(): number {
    return this.settings?.contextWindow ?? this.serverWindow ?? FALLBACK_WINDOW;
  }

  private environment() {
    const e = this.endpoints!;
    return { settings: this.settings!, contextWindow: this.contextWindow(), agent: e.agent, compactor: e.compactor, compactorLimiter: e.compactorLimiter, judge: e.judge };
  }

  private rebuildEnvironment(): void {
    if (!this.settings) return;
    this.endpoints = this.makeEndpoints();
    this.controller?.updateEnvironment(this.environment());
    this.updateStatus();
  }

  private async settingsChanged(): Promise<void> {
    const before = this.settings;
    this.loadSettings();
    if (before && (before.endpoint !== this.settings!.endpoint || before.model !== this.settings!.model)) {
      this.serverWindow = undefined;
      this.connection = { state: 'unknown', message: null };
      void this.probe();
    }
    this.rebuildEnvironment();
  }

  /**
   * Asks the server for its models and window. Not on activation: when the
   * host starts, after settings change, and before a message when the last
   * probe failed.
   */
  probe(): Promise<void> {
    this.probing ??= (async () => {
      const e = this.endpoints;
      if (!e) return;
      const t0 = Date.now();
      try {
        const models = await e.client.listModels();
        const chosen = this.settings!.model ? models.find((m) => m.id === this.settings!.model) : models[0];
        if (this.settings!.model && !chosen) {
          this.connection = { state: 'error', message: `The server lists no model "${this.settings!.model}" (it has: ${models.map((m) => m.id).join(', ') || 'none'}).` };
        } else {
          this.connection = { state: 'ok', message: chosen ? `${chosen.id}${chosen.maxModelLen ? `, ${chosen.maxModelLen} tokens` : ''}` : null };
          this.serverWindow = chosen?.maxModelLen;
        }
        this.log.info(`probe ${e.client.baseURL}: ${models.length} model(s) in ${Date.now() - t0} ms; window ${this.serverWindow ?? 'not reported'}`);
      } catch (err) {
        this.connection = { state: 'error', message: (err as Error).message };
        this.log.warn(`probe ${e.client.baseURL} failed after ${Date.now() - t0} ms: ${(err as { kind?: string }).kind ?? 'error'}`);
      }
      if (this.controller && this.controller.environment.contextWindow !== this.contextWindow()) this.controller.updateEnvironment(this.environment());
      else this.pushSnapshot();
    })().finally(() => (this.probing = undefined));
    return this.probing;
  }

  // ------------------------------------------------------------ sessions

  private toolEnv(): ToolEnv {
    return {
      root: () => vscode.workspace.workspaceFolders?.[0]?.uri,
      trusted: () => vscode.workspace.isTrusted,
      // Restricted Mode ignores the allowlist: nothing runs without the user there.
      allowlist: () => (vscode.workspace.isTrusted ? (this.settings?.commandAllowlist ?? []) : []),
      timeoutSeconds: () => this.settings?.commandTimeoutSeconds ?? 120,
      commandEnv: () => this.settings?.commandEnv ?? [...DEFAULT_COMMAND_ENV],
      sandbox: () => ({ mode: this.settings?.commandSandbox ?? 'auto', allowNetwork: this.settings?.commandNetwork ?? false }),
    };
  }

  private listCache: SessionListItem[] = [];

  private describeSessions(store: SessionStore): { session: SessionListItem; sessions: SessionListItem[] } {
    const current: SessionListItem = {
      id: this.activeId ?? store.id,
      title: store.snapshot.title ?? titleOf(store),
      createdAt: store.snapshot.createdAt,
      messageCount: store.snapshot.messages.length,
    };
    const sessions = this.listCache.map((s) => (s.id === current.id ? current : s));
    if (!sessions.some((s) => s.id === current.id)) sessions.unshift(current);
    return { session: current, sessions };
  }

  private async refreshList(): Promise<void> {
    if (!this.library) return;
    if (this.activeId) this.library.invalidate(this.activeId);
    this.listCache = (await this.library.list()).map(({ id, title, createdAt, messageCount }) => ({ id, title, createdAt, messageCount }));
  }

  private async attach(id: string, store: SessionStore): Promise<SessionController> {
    const old = this.controller;
    this.controller = undefined;
    if (old) await old.dispose();
    if (store.snapshot.messages.length === 0) {
      const folder = vscode.workspace.workspaceFolders?.[0];
      await store.append({ role: 'system', content: agentSystemPrompt(folder ? folder.name : 'no folder open') });
    }
    this.activeId = id;
    await this.context.workspaceState.update('splitpoint.lastSession', id);
    await this.refreshList();
    const tools = this.toolEnv();
    const controller = new SessionController({
      store,
      ledger: this.ledger!,
      env: this.environment(),
      workspaceTools: (broker) => vscodeWorkspaceTools(tools, broker),
      approvalPreview: (call) =>
        previewCall(tools, call, (callId, change) => {
          const root = tools.root();
          if (root) this.diff?.remember(callId, change, root);
        }),
      spill: fileSpill(`${store.path}.spill`),
      clock: systemClock,
      ids: randomIds,
      post: (m) => this.post(m),
      log: this.log,
      sessions: () => this.describeSessions(store),
      connection: () => this.connection,
      trusted: () => vscode.workspace.isTrusted,
      setStrategy: (s) => void updateSetting('compaction.strategy', s),
      onError: (message) => this.reportError(message),
      onApprovalAsked: (v) => {
        if (v.path) void this.diff?.show(v.callId);
        if (!this.view.visible) {
          void vscode.window.showInformationMessage(`Splitpoint wants to ${v.command ? `run "${v.command}"` : v.summary}.`, 'Show', 'Approve', 'Reject').then((a) => {
            if (a === 'Approve') controller.broker.approve(v.callId);
            else if (a === 'Reject') controller.broker.reject(v.callId, null);
            else if (a === 'Show') void vscode.commands.executeCommand('splitpoint.open');
          });
        }
      },
      onApprovalResolved: (callId) => void this.diff?.close(callId),
      onStateChange: () => this.updateStatus(),
    });
    this.controller = controller;
    this.pushSnapshot(); // also updates the status bar
    this.log.info(`session ${id} open: ${store.snapshot.messages.length} messages, ${store.snapshot.compactions.length} compaction(s) in force`);
    return controller;
  }

  /** Opens a session; a damaged file is reported (line, backup) and left untouched. */
  private async tryOpen(id: string): Promise<SessionController | undefined> {
    try {
      return await this.attach(id, await this.library!.open(id));
    } catch (err) {
      const message = err instanceof SessionCorruptError ? err.message : `Could not open session ${id}: ${(err as Error).message}`;
      this.log.error(message);
      void vscode.window.showErrorMessage(`Splitpoint: ${message}`, 'Open File').then((a) => {
        if (a) void vscode.window.showTextDocument(vscode.Uri.file(this.library!.pathFor(id)));
      });
      return undefined;
    }
  }

  async openNew(): Promise<SessionController> {
    const { id, store } = await this.library!.create();
    return this.attach(id, store);
  }

  async newSession(): Promise<void> {
    await this.ensureStarted();
    if (this.controller?.isRunning) {
      const go = await vscode.window.showWarningMessage('The agent is still working. Stop it and start a new session?', { modal: true }, 'Stop and Start New');
      if (!go) return;
    }
    await this.openNew();
  }

  async switchTo(id: string): Promise<void> {
    await this.ensureStarted();
    if (id === this.activeId) return this.pushSnapshot();
    if (this.controller?.isRunning) return this.post({ type: 'notice', level: 'warning', text: 'Stop the agent before switching sessions.' });
    const opened = await this.tryOpen(id);
    if (!opened) this.post({ type: 'notice', level: 'error', text: `Session ${id} could not be opened; the current session stays open. See the notification for details.` });
  }

  async importStore(id: string, store: SessionStore): Promise<void> {
    await this.attach(id, store);
  }

  /** The API key lives here only: never in settings, logs, session files or the webview. */
  get secrets(): vscode.SecretStorage {
    return this.context.secrets;
  }

  get sessionLibrary(): SessionLibrary | undefined {
    return this.library;
  }

  get activeSessionId(): string | undefined {
    return this.activeId;
  }

  get endpointsForCommands(): Endpoints | undefined {
    return this.endpoints;
  }

  // ------------------------------------------------------------ view

  private readonly postListeners = new Set<(msg: HostToWebview) => void>();

  post(msg: HostToWebview): void {
    this.view.post(msg);
    for (const l of this.postListeners) l(msg);
  }

  /** Every message sent to the webview, whether or not it is open (the test API uses this). */
  onDidPost(listener: (msg: HostToWebview) => void): vscode.Disposable {
    this.postListeners.add(listener);
    return new vscode.Disposable(() => this.postListeners.delete(listener));
  }

  /** The snapshot the view would get now; the host must have started (first `ready` or command). */
  currentSnapshot(): ViewSnapshot {
    if (!this.controller) throw new Error('Splitpoint has not started yet: send {type: "ready"} or run a command first.');
    return this.controller.snapshot();
  }

  currentSettings(): SettingsReport {
    return readVscodeSettings();
  }

  pushSnapshot(): void {
    if (this.controller) this.post({ type: 'snapshot', snapshot: this.controller.snapshot() });
    this.updateStatus();
  }

  async onWebviewMessage(msg: WebviewToHost): Promise<void> {
    try {
      const c = await this.ensureStarted();
      switch (msg.type) {
        case 'ready':
        case 'visible':
          await this.refreshList();
          this.pushSnapshot();
          if (this.connection.state !== 'ok') void this.probe();
          return;
        case 'new-session':
          return this.newSession();
        case 'switch-session':
          return this.switchTo(msg.sessionId);
        case 'send':
          // A server that was down may be up now: learn its window before the turn.
          if (this.connection.state !== 'ok') await this.probe();
          return (this.controller ?? c).handle(msg);
        default:
          return (this.controller ?? c).handle(msg);
      }
    } catch (err) {
      this.log.error(`handling ${msg.type}: ${(err as Error).stack ?? (err as Error).message}`);
      this.post({ type: 'notice', level: 'error', text: (err as Error).message });
    }
  }

  private reportError(message: string): void {
    const last = this.endpoints?.agent.lastError ?? this.endpoints?.compactor.lastError;
    const related = last && message.includes((last as Error).message) ? last : undefined;
    const a = describeFailure(related, message, this.settings?.endpoint ?? '');
    if ((related as { kind?: string } | undefined)?.kind === 'connection') this.connection = { state: 'error', message: a.message };
    void vscode.window.showErrorMessage(`Splitpoint: ${a.message}`, ...a.actions).then((choice) => {
      if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', a.settingsQuery ?? 'splitpoint');
      else if (choice === 'Set API Key') void vscode.commands.executeCommand('splitpoint.setApiKey');
      else if (choice === 'Select Model') void vscode.commands.executeCommand('splitpoint.selectModel');
      else if (choice === 'Show Log') this.log.show();
    });
  }

  // ------------------------------------------------------------ status

  updateStatus(): void {
    const c = this.controller;
    if (!this.status) return;
    const g = c ? { used: c.contextTokens(), window: c.environment.contextWindow, ...c.environment.settings.thresholds } : undefined;
    const s = gaugeStatus(g, c?.isRunning ?? false);
    this.status.text = s.text;
    this.status.tooltip = s.tooltip;
    this.status.backgroundColor = s.level === 'normal' ? undefined : new vscode.ThemeColor(s.level === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    this.status.show();
    const store = c?.store;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasMessages, !!store && store.snapshot.messages.some((m) => m.role !== 'system'));
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.canUndo, !!store && store.snapshot.compactions.length > 0);
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.agentRunning, c?.isRunning ?? false);
  }

  async dispose(): Promise<void> {
    await this.controller?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

function titleOf(store: SessionStore): string {
  const first = store.snapshot.messages.find((m) => m.role === 'user' && m.kind !== 'pinned');
  return first ? titleFrom(first.content ?? '') : 'New session';
}
