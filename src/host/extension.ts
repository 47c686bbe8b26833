import * as vscode from 'vscode';
import { COMMANDS } from './commandTable';
import { commandHandlers } from './commands';
import { SplitpointHost } from './host';
import { SessionViewProvider, VIEW_ID } from './sessionViewProvider';

let host: SplitpointHost | undefined;

/**
 * Activation stays cheap: it registers the view and the commands and
 * creates the log. No settings are validated, no tokenizer is loaded and no
 * request is made until the view asks for its first snapshot or a command
 * runs (SplitpointHost.ensureStarted).
 */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Splitpoint', { log: true });
  let h: SplitpointHost | undefined;
  const provider = new SessionViewProvider(
    context.extensionUri,
    (msg) => void h?.onWebviewMessage(msg),
    (detail) => log.warn(detail),
  );
  h = new SplitpointHost(context, log, provider);
  host = h;
  const handlers = commandHandlers(h);
  context.subscriptions.push(
    log,
    vscode.window.registerWebviewViewProvider(VIEW_ID, provider, { webviewOptions: { retainContextWhenHidden: false } }),
    ...COMMANDS.map((c) =>
      vscode.commands.registerCommand(c.id, async () => {
        try {
          return await handlers[c.id]();
        } catch (err) {
          log.error(`${c.id}: ${(err as Error).stack ?? (err as Error).message}`);
          void vscode.window.showErrorMessage(`Splitpoint: ${(err as Error).message}`, 'Show Log').then((a) => a && log.show());
          return undefined;
        }
      }),
    ),
  );
  log.info('Splitpoint activated');
}

export async function deactivate(): Promise<void> {
  await host?.dispose();
  host = undefined;
}
