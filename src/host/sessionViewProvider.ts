import * as vscode from 'vscode';
import type { HostToWebview, ViewSnapshot } from '../protocol/messages';
import { isWebviewToHost } from '../protocol/messages';
import { renderWebviewHtml } from './webviewHtml';

export const VIEW_ID = 'splitpoint.view';

/** Hosts the Splitpoint webview. The host owns all state; the view gets a full snapshot on ready and on becoming visible. */
export class SessionViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly snapshot: () => ViewSnapshot,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    view.webview.html = renderWebviewHtml(view.webview, this.extensionUri);
    view.webview.onDidReceiveMessage((msg: unknown) => {
      if (!isWebviewToHost(msg)) return;
      switch (msg.type) {
        case 'ready':
        case 'visible':
          this.post({ type: 'snapshot', snapshot: this.snapshot() });
          return;
      }
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) this.post({ type: 'snapshot', snapshot: this.snapshot() });
    });
  }

  private post(msg: HostToWebview): void {
    void this.view?.webview.postMessage(msg);
  }
}
