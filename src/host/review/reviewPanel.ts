import * as vscode from 'vscode';
import type { HostToWebview, ViewSnapshot, WebviewToHost } from '../../protocol/messages';
import { isReviewToHost, type HostToReview } from '../../protocol/review';
import { webviewPage } from '../webviewHtml';
import type { FullText } from './lossSources';
import { bridgeOnFullTexts, hostMessageFor } from './reviewBridge';

export const REVIEW_VIEW_TYPE = 'splitpoint.review';

/** What the panel needs from the host (SplitpointHost provides it). */
export interface ReviewSource {
  ensureStarted(): Promise<unknown>;
  currentSnapshot(): ViewSnapshot;
  onWebviewMessage(msg: WebviewToHost): Promise<void>;
  onDidPost(listener: (msg: HostToWebview) => void): vscode.Disposable;
  /** The open session's whole texts, which the loss report judges (the snapshot's tool outputs are cut). */
  fullTexts(): FullText;
}

/**
 * The compaction review editor: one WebviewPanel in the editor area, reused
 * when opened again, restored after a window reload by the serializer.
 */
export class ReviewPanels implements vscode.WebviewPanelSerializer {
  private panel: vscode.WebviewPanel | undefined;
  private bridge = bridgeOnFullTexts(() => this.source.fullTexts());
  private subs: vscode.Disposable[] = [];
  /** Coalesces full states: many host posts in one tick become one message. */
  private pendingState: NodeJS.Timeout | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly source: ReviewSource,
    private readonly warn: (detail: string) => void,
  ) {}

  register(): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(REVIEW_VIEW_TYPE, this);
  }

  open(): void {
    if (this.panel) return this.panel.reveal(vscode.ViewColumn.Active);
    const panel = vscode.window.createWebviewPanel(REVIEW_VIEW_TYPE, 'Review Compaction', vscode.ViewColumn.Active, this.options());
    this.attach(panel);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.options = this.options();
    this.attach(panel);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.detach();
    this.panel = panel;
    this.bridge = bridgeOnFullTexts(() => this.source.fullTexts());
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'splitpoint.svg');
    panel.webview.html = reviewHtml(panel.webview, this.extensionUri);
    this.subs.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)),
      this.source.onDidPost((msg) => this.forward(this.bridge.onHostPost(msg))),
      panel.onDidDispose(() => {
        this.detach();
        this.panel = undefined;
      }),
    );
  }

  private detach(): void {
    for (const d of this.subs) d.dispose();
    this.subs = [];
    if (this.pendingState) clearTimeout(this.pendingState);
    this.pendingState = undefined;
  }

  private async receive(raw: unknown): Promise<void> {
    if (!isReviewToHost(raw)) return this.warn(`review editor: ignored a malformed message ${JSON.stringify(raw)?.slice(0, 200)}`);
    if (raw.type === 'review-ready') {
      await this.source.ensureStarted();
      return this.post(this.bridge.fromSnapshot(this.source.currentSnapshot()));
    }
    const msg = hostMessageFor(raw);
    if (msg) await this.source.onWebviewMessage(msg);
  }

  private forward(msg: HostToReview | null): void {
    if (!msg) return;
    if (msg.type !== 'review-state') return this.post(msg);
    if (this.pendingState) return;
    this.pendingState = setTimeout(() => {
      this.pendingState = undefined;
      const s = this.bridge.current;
      if (s) this.post({ type: 'review-state', state: s });
    }, 16);
  }

  private post(msg: HostToReview): void {
    void this.panel?.webview.postMessage(msg);
  }

  dispose(): void {
    this.detach();
    this.panel?.dispose();
  }
}

export function reviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return webviewPage(webview, extensionUri, { script: 'review.js', style: 'review.css', title: 'Review Compaction' });
}
