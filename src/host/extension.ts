import * as vscode from 'vscode';
import type { CommandId } from './commandTable';
import { SessionViewProvider, VIEW_ID } from './sessionViewProvider';

/**
 * Activation stays cheap: no tokenizer, no network. Both load on first use.
 */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Splitpoint', { log: true });
  const provider = new SessionViewProvider(context.extensionUri, () => ({
    sessionTitle: 'New session',
    messageCount: 0,
    totalTokens: null,
    contextWindow: null,
  }));
  const handlers: Record<CommandId, () => unknown> = {
    'splitpoint.open': () => vscode.commands.executeCommand(`${VIEW_ID}.focus`),
    'splitpoint.showLog': () => log.show(),
  };
  context.subscriptions.push(
    log,
    vscode.window.registerWebviewViewProvider(VIEW_ID, provider, { webviewOptions: { retainContextWhenHidden: false } }),
    ...Object.entries(handlers).map(([id, fn]) => vscode.commands.registerCommand(id, fn)),
  );
  log.info('Splitpoint activated');
}

export function deactivate(): void {}
