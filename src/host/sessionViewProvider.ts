import * as vscode from 'vscode';
import type { HostToWebview, HostToWebviewPost, WebviewToHost } from '../protocol/messages';
import { PostBatcher } from './postBatcher';
import { isWebviewToHost } from '../protocol/validate';
import { renderWebviewHtml } from './webviewHtml';

export const VIEW_ID = 'splitpoint.view';

/**
 * Hosts the Splitpoint webview and nothing else: it validates what the page
 * sends (a page is untrusted input) and forwards it; state lives in the host.
 * It tells the host when the view becomes visible again so a full snapshot
 * is sent (the page is not retained while hidden).
 */
export class SessionViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private readonly batcher = new PostBatcher((post) => this.send(post));

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (msg: WebviewToHost) => void,
    private readonly onInvalid: (detail: string) => void,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    view.webview.html = renderWebviewHtml(view.webview, this.extensionUri);
    view.webview.onDidReceiveMessage((msg: unknown) => {
      if (!isWebviewToHost(msg)) {
        const type = typeof msg === 'object' && msg !== null ? String((msg as { type?: unknown }).type) : typeof msg;
        return this.onInvalid(`ignored a malformed message from the view (type ${type})`);
      }
      this.onMessage(msg);
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) this.onMessage({ type: 'visible' });
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  post(msg: HostToWebview): void {
    if (this.view?.visible) this.batcher.post(msg);
  }

  private send(post: HostToWebviewPost): void {
    // A hidden view is not retained; it gets a full snapshot when it is shown again.
    if (this.view?.visible) void this.view.webview.postMessage(post);
  }
}
