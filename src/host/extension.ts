import * as vscode from 'vscode';
import type { SettingsReport } from '../core/config/settings';
import type { HostToWebview, ViewSnapshot, WebviewToHost } from '../protocol/messages';
import { COMMANDS } from './commandTable';
import { commandHandlers } from './commands';
import { SplitpointHost } from './host';
import { ReviewPanels } from './review/reviewPanel';
import { SessionViewProvider, VIEW_ID } from './sessionViewProvider';

let host: SplitpointHost | undefined;

/**
 * Activation stays cheap: it registers the view and the commands and
 * creates the log. No settings are validated, no tokenizer is loaded and no
 * request is made until the view asks for its first snapshot or a command
 * runs (SplitpointHost.ensureStarted).
 */
export function activate(context: vscode.ExtensionContext): SplitpointTestApi | undefined {
  const log = vscode.window.createOutputChannel('Splitpoint', { log: true });
  // The view calls back into the host, which needs the view: the callback reads `h` only once messages arrive.
  const provider = new SessionViewProvider(
    context.extensionUri,
    (msg) => void h.onWebviewMessage(msg),
    (detail) => log.warn(detail),
  );
  const h = new SplitpointHost(context, log, provider);
  host = h;
  const review = new ReviewPanels(context.extensionUri, h, (detail) => log.warn(detail));
  const handlers = commandHandlers(h, review);
  context.subscriptions.push(
    log,
    vscode.window.registerWebviewViewProvider(VIEW_ID, provider, { webviewOptions: { retainContextWhenHidden: false } }),
    review.register(),
    review,
    ...COMMANDS.map((c) =>
      vscode.commands.registerCommand(c.id, async (...args: unknown[]) => {
        try {
          return await handlers[c.id](...args);
        } catch (err) {
          log.error(`${c.id}: ${(err as Error).stack ?? (err as Error).message}`);
          void vscode.window.showErrorMessage(`Splitpoint: ${(err as Error).message}`, 'Show Log').then((a) => a && log.show());
          return undefined;
        }
      }),
    ),
  );
  log.info('Splitpoint activated');
  // The webview protocol as an API, for the real-VS-Code test suite. Only
  // outside production: installed from a VSIX, the extension exports nothing
  // another extension could use to drive the agent.
  if (context.extensionMode === vscode.ExtensionMode.Production) return undefined;
  return {
    receive: (msg) => receiveLikeTheView(h, msg),
    onDidPost: (listener, options) => h.onDidPost(listener, options),
    snapshot: () => h.currentSnapshot(),
    settings: () => h.currentSettings(),
  };
}

/**
 * Handles a message as the view's postMessage would. A `send` resolves once
 * the turn has started (the view never waits for a whole turn, which may
 * itself wait for an approval); everything else once it has been handled.
 */
function receiveLikeTheView(h: SplitpointHost, msg: WebviewToHost): Promise<void> {
  const handled = h.onWebviewMessage(msg);
  if (msg.type !== 'send') return handled;
  return new Promise<void>((resolve) => {
    const sub = h.onDidPost((m) => {
      if (m.type === 'agent-state' && m.running) {
        sub.dispose();
        resolve();
      }
    });
    void handled.finally(() => {
      sub.dispose();
      resolve();
    });
  });
}

/** What activate() returns in development and test modes. */
export interface SplitpointTestApi {
  receive(msg: WebviewToHost): Promise<void>;
  onDidPost(listener: (msg: HostToWebview) => void, options?: { watches?: boolean }): vscode.Disposable;
  snapshot(): ViewSnapshot;
  settings(): SettingsReport;
}

export async function deactivate(): Promise<void> {
  await host?.dispose();
  host = undefined;
}
