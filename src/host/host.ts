import * as vscode from 'vscode';
import { loadRoleKeys } from './apiKeys';
import { agentSystemPrompt } from '../core/agent/systemPrompt';
import type { SettingsReport } from '../core/config/settings';
import { SessionCorruptError, SessionLockedError } from '../core/session/errors';
import type { SessionStore } from '../core/session/sessionStore';
import { elapsedNow, randomIds, systemClock } from '../core/session/storage';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { BackgroundCounter, primeCounts } from '../node/backgroundCounter';
import { NodeFileStorage } from '../node/fileStorage';
import { fileSpill } from '../node/tools';
import { approvalNotice } from '../protocol/commandText';
import type { HostToWebview, SessionListItem, ViewSnapshot, WebviewToHost } from '../protocol/messages';
import { readVscodeSettings, updateSetting } from './config';
import { DiffView } from './diffView';
import type { Endpoints } from './modelPorts';
import { PostListeners } from './postListeners';
import { ServerConnection } from './serverConnection';
import { SessionController } from './sessionController';
import { SessionLibrary, titleFrom } from './sessionLibrary';
import { importDemoSession } from './demoSession';
import { SerialQueue } from './serialQueue';
import type { SessionViewProvider } from './sessionViewProvider';
import { HostStatus } from './statusBar';
import { previewCall, vscodeWorkspaceTools } from './tools/workspaceTools';
import { hostToolEnv } from './tools/toolEnv';
import { dispatchWebview, type SessionOps } from './webviewDispatch';
import { fullTextOf, type FullText } from './review/lossSources';

export const API_KEY_SECRET = 'splitpoint.apiKey';

/**
 * The extension's state across sessions: the server connection, the session
 * library, and the one open SessionController. It starts lazily, on the first
 * view `ready` or command, so activation loads no tokenizer and makes no
 * request.
 */
export class SplitpointHost implements vscode.Disposable {
  private controller: SessionController | undefined;
  private activeId: string | undefined;
  private starting: Promise<SessionController> | undefined;
  private library: SessionLibrary | undefined;
  private ledger: TokenLedger | undefined;
  private counting: BackgroundCounter | undefined;
  private readonly server: ServerConnection;
  private status: HostStatus | undefined;
  private diff: DiffView | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    readonly view: SessionViewProvider,
  ) {
    this.server = new ServerConnection({
      log,
      warn: (text) => this.post({ type: 'notice', level: 'warning', text }),
      probed: () => {
        const c = this.controller;
        if (c && c.environment.contextWindow !== this.server.contextWindow()) c.updateEnvironment(this.server.environment());
        else this.pushSnapshot();
      },
      memo: context.globalState,
      workspaceRoot: () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    });
  }

  // ------------------------------------------------------------ lifecycle

  /** The open session's controller, starting the host on first use. */
  ensureStarted(): Promise<SessionController> {
    if (this.controller) return Promise.resolve(this.controller);
    // Between sessions (attach disposed the old controller): the one being attached, not a second start.
    if (this.attaching.pending) return this.attaching.pending;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<SessionController> {
    const t0 = elapsedNow(systemClock);
    this.wireOnce();
    this.server.loadSettings();
    this.server.apiKeys = await loadRoleKeys((k) => this.context.secrets.get(k));
    this.server.rebuildEndpoints();
    // The counting worker starts with it, so the session opened below finds it ready.
    (this.counting ??= new BackgroundCounter()).warm();
    // The tokenizer loads here, off the activation path, on first use of the view or a command.
    this.ledger = new TokenLedger(await loadTiktokenCounter());
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    const storage = new NodeFileStorage('VS Code'); // the name another process's refusal shows
    this.library = new SessionLibrary(storage, vscode.Uri.joinPath(base, 'sessions').fsPath, systemClock, randomIds);
    const last = this.context.workspaceState.get<string>('splitpoint.lastSession');
    let entries = await this.library.list();
    if (entries.length === 0 && (await importDemoSession(this.library, this.log))) entries = await this.library.list();
    const target = entries.find((e) => e.id === last) ?? entries[0];
    // A window reloading: the old extension host may still hold the session while it shuts down (up to ~5 s).
    const opened = target ? await this.tryOpen(target.id, 6_000) : undefined;
    if (opened instanceof SessionController) return this.started(opened, t0, entries.length);
    const controller = await this.openNew();
    // Held by another process, the last session is still the one to reopen next time.
    if (opened instanceof SessionLockedError) await this.context.workspaceState.update('splitpoint.lastSession', target!.id);
    return this.started(controller, t0, entries.length);
  }

  private started(controller: SessionController, t0: number, sessions: number): SessionController {
    this.log.info(`started in ${elapsedNow(systemClock) - t0} ms: ${sessions} session(s), storage ${this.library!.dir}`);
    void this.server.probe();
    return controller;
  }

  /** Listeners and UI that only make sense once the host runs. */
  private wireOnce(): void {
    if (this.status) return;
    this.status = new HostStatus();
    this.diff = new DiffView();
    this.disposables.push(
      this.status,
      this.diff,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('splitpoint')) return;
        const reprobe = this.server.reloadSettings();
        this.rebuildEnvironment();
        // After the rebuild, so the probe asks the new endpoint.
        if (reprobe) void this.server.probe();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log.info('workspace trusted: edits and commands are enabled');
        this.pushSnapshot();
      }),
      this.context.secrets.onDidChange((e) => {
        if (e.key.startsWith(API_KEY_SECRET)) void this.reloadApiKeys();
      }),
    );
  }

  private rebuildEnvironment(): void {
    if (!this.server.settings) return;
    this.server.rebuildEndpoints();
    this.controller?.updateEnvironment(this.server.environment());
    this.updateStatus();
  }

  // ------------------------------------------------------------ sessions

  private listCache: SessionListItem[] = [];

  private describeSessions(store: SessionStore): { session: SessionListItem; sessions: SessionListItem[] } {
    const { title, createdAt, messages } = store.snapshot;
    const id = this.activeId ?? store.id;
    const listed = this.listCache.find((s) => s.id === id);
    // As listed (the size too), but last used when the log's latest time was listed or at a message written since.
    const lastUsedAt = messages.reduce((t, m) => Math.max(t, m.timestamp), listed?.lastUsedAt ?? createdAt);
    const current = { ...listed, id, title: title ?? titleOf(store), createdAt, messageCount: messages.length, lastUsedAt };
    const sessions = this.listCache.map((s) => (s.id === current.id ? current : s));
    if (!sessions.some((s) => s.id === current.id)) sessions.unshift(current);
    return { session: current, sessions };
  }

  private async refreshList(): Promise<void> {
    if (!this.library) return;
    if (this.activeId) this.library.invalidate(this.activeId);
    this.listCache = (await this.library.list()).map(({ path: _path, damaged: _damaged, ...item }) => item);
  }

  private readonly attaching = new SerialQueue<SessionController>();

  /**
   * Makes the store the active session (opened, created or imported), closing the one before. One at a time, so two
   * sessions opened together (quick picks) each close the one before; a store that cannot be attached is closed.
   */
  attach(id: string, store: SessionStore): Promise<SessionController> {
    return this.attaching.run(() => this.attachNow(id, store).catch((err: unknown) => store.close().then(() => Promise.reject(err))));
  }

  private async attachNow(id: string, store: SessionStore): Promise<SessionController> {
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
    for (const r of store.repairs) this.log.warn(`session ${id}: ${r}`);
    // Counts the log lacks are made on a worker and stored, so neither this open nor the next counts on this thread.
    await primeCounts(store, (this.counting ??= new BackgroundCounter())).catch((err: unknown) =>
      this.log.warn(`token counts: ${(err as Error).message}`),
    );
    this.ledger!.calibration.load(store.snapshot.calibration);
    const tools = hostToolEnv(() => this.server.settings);
    const controller = new SessionController({
      store,
      ledger: this.ledger!,
      env: this.server.environment(),
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
      connection: () => this.server.connection,
      trusted: () => vscode.workspace.isTrusted,
      setStrategy: (s) => void updateSetting('compaction.strategy', s),
      confirm: async (message, action) => (await vscode.window.showWarningMessage(message, { modal: true }, action)) === action,
      onError: (message) => this.server.reportError(message),
      onApprovalAsked: (v) => {
        if (v.path) void this.diff?.show(v.callId);
        if (this.view.visible) return;
        const notice = approvalNotice(v);
        void vscode.window.showInformationMessage(notice.text, ...notice.actions).then((a) => {
          if (a === 'Approve') controller.broker.approve(v.callId);
          else if (a === 'Reject') controller.broker.reject(v.callId, null);
          else if (a === 'Show') void vscode.commands.executeCommand('splitpoint.open');
        });
      },
      onApprovalResolved: (callId) => void this.diff?.close(callId),
      onStateChange: () => this.updateStatus(),
      // A hidden view is not retained and gets a snapshot when shown; a watching listener (review editor, test API) keeps deltas coming.
      wantsDeltas: () => this.view.visible || this.postListeners.watched,
    });
    this.controller = controller;
    this.pushSnapshot(); // also updates the status bar
    const snap = store.snapshot;
    this.log.info(`session ${id} open: ${snap.messages.length} messages, ${snap.compactions.length} compaction(s) in force`);
    return controller;
  }

  /** Opens a session; a damaged or locked file is reported (line and backup, or its holder) and left untouched. */
  private async tryOpen(id: string, waitForLockMs = 0): Promise<SessionController | Error> {
    try {
      return await this.attach(id, await this.library!.open(id, waitForLockMs));
    } catch (err) {
      if (err instanceof SessionLockedError && waitForLockMs > 0) {
        // On start (another window has it, or a second window without a folder shares the library): not a fault.
        this.log.info(err.message);
        void vscode.window.showInformationMessage(
          `Splitpoint: the last session is open for writing in ${err.holder}, so this window started a new one. ` +
            'Pick the last one from the session list once it is closed there.',
        );
        return err;
      }
      const plain = err instanceof SessionCorruptError || err instanceof SessionLockedError;
      const message = plain ? err.message : `Could not open session ${id}: ${(err as Error).message}`;
      this.log.error(message);
      void vscode.window.showErrorMessage(`Splitpoint: ${message}`, 'Open File').then((a) => {
        if (a) void vscode.window.showTextDocument(vscode.Uri.file(this.library!.pathFor(id)));
      });
      return err as Error;
    }
  }

  async openNew(): Promise<SessionController> {
    const { id, store } = await this.library!.create();
    return this.attach(id, store);
  }

  async newSession(): Promise<void> {
    await this.ensureStarted();
    if (this.controller?.isRunning) {
      const go = await vscode.window.showWarningMessage(
        'The agent is still working. Stop it and start a new session?',
        { modal: true },
        'Stop and Start New',
      );
      if (!go) return;
    }
    await this.openNew();
  }

  async switchTo(id: string): Promise<void> {
    await this.ensureStarted();
    if (id === this.activeId) return this.pushSnapshot();
    if (this.controller?.isRunning)
      return this.post({ type: 'notice', level: 'warning', text: 'Stop the agent before switching sessions.' });
    const opened = await this.tryOpen(id);
    if (!(opened instanceof SessionController)) {
      const text = `Session ${id} could not be opened; the current session stays open. See the notification for details.`;
      this.post({ type: 'notice', level: 'error', text });
    }
  }

  /**
   * The API key lives here only: never in settings, logs, session files or the webview. Reads the keys again and
   * rebuilds the clients. Set API Key awaits it, so the very next request carries the new key; the secrets event
   * alone fires later, after the command has returned.
   */
  async reloadApiKeys(): Promise<void> {
    this.server.apiKeys = await loadRoleKeys((k) => this.context.secrets.get(k));
    this.rebuildEnvironment();
  }

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
    return this.server.endpoints;
  }

  // ------------------------------------------------------------ view

  private readonly postListeners = new PostListeners();

  post(msg: HostToWebview): void {
    this.view.post(msg);
    this.postListeners.emit(msg);
  }

  /** Every message sent to the webview, whether or not it is open; a listener watches unless `watches` is false. */
  onDidPost(listener: (msg: HostToWebview) => void, options: { watches?: boolean } = {}): vscode.Disposable {
    return new vscode.Disposable(this.postListeners.add(listener, options.watches !== false));
  }

  /** The snapshot the view would get now; the host must have started (first `ready` or command). */
  currentSnapshot(): ViewSnapshot {
    if (!this.controller) throw new Error('Splitpoint has not started yet: send {type: "ready"} or run a command first.');
    return this.controller.snapshot();
  }

  fullTexts(): FullText {
    return fullTextOf(this.controller?.store);
  }

  currentSettings(): SettingsReport {
    return readVscodeSettings();
  }

  pushSnapshot(): void {
    if (this.controller) this.post({ type: 'snapshot', snapshot: this.controller.snapshot() });
    this.updateStatus();
  }

  /** The host's answers to session-level messages (see webviewDispatch). */
  private readonly sessionOps: SessionOps = {
    showLatest: async () => {
      await this.refreshList();
      this.pushSnapshot();
      if (this.server.connection.state !== 'ok') void this.server.probe();
    },
    newSession: () => this.newSession(),
    switchTo: (id) => this.switchTo(id),
    // A server that was down may be up now: learn its window before the turn.
    beforeSend: async () => {
      if (this.server.connection.state !== 'ok') await this.server.probe();
    },
    openReview: async () => {
      await vscode.commands.executeCommand('splitpoint.reviewCompaction');
    },
  };

  async onWebviewMessage(msg: WebviewToHost): Promise<void> {
    try {
      const c = await this.ensureStarted();
      await dispatchWebview({ controller: () => this.controller ?? c, session: this.sessionOps }, msg);
    } catch (err) {
      this.log.error(`handling ${msg.type}: ${(err as Error).stack ?? (err as Error).message}`);
      this.post({ type: 'notice', level: 'error', text: (err as Error).message });
    }
  }

  updateStatus(): void {
    this.status?.update(this.controller);
  }

  async dispose(): Promise<void> {
    await this.controller?.dispose();
    await this.counting?.dispose();
    this.server.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

function titleOf(store: SessionStore): string {
  const first = store.snapshot.messages.find((m) => m.role === 'user' && m.kind !== 'pinned');
  return first ? titleFrom(first.content ?? '') : 'New session';
}
