import * as vscode from 'vscode';
import type { ProposedChange } from './proposedChange';

/**
 * Shows a proposed edit in VS Code's diff editor while its approval card is
 * open: the left side is the file as it is, the right a read-only virtual
 * document with the proposed text. Closed again once the card is answered.
 */
export const PROPOSED_SCHEME = 'splitpoint-proposed';

export class DiffView implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly proposed = new Map<string, { change: Extract<ProposedChange, { ok: true }>; root: vscode.Uri }>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const callId = new URLSearchParams(uri.query).get('call') ?? '';
    const p = this.proposed.get(callId);
    if (!p) return '';
    return uri.fragment === 'before' ? (p.change.before ?? '') : p.change.after;
  }

  remember(callId: string, change: Extract<ProposedChange, { ok: true }>, root: vscode.Uri): void {
    this.proposed.set(callId, { change, root });
  }

  private uriFor(callId: string, path: string, side: 'before' | 'after'): vscode.Uri {
    return vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${path}`, query: `call=${encodeURIComponent(callId)}`, fragment: side });
  }

  async show(callId: string): Promise<void> {
    const p = this.proposed.get(callId);
    if (!p) return;
    const real = vscode.Uri.joinPath(p.root, p.change.path);
    const left = p.change.before === undefined ? this.uriFor(callId, p.change.path, 'before') : real;
    const title = `${p.change.path} ↔ proposed by Splitpoint (${p.change.before === undefined ? 'new file' : 'needs approval'})`;
    await vscode.commands.executeCommand('vscode.diff', left, this.uriFor(callId, p.change.path, 'after'), title, {
      preview: true,
      preserveFocus: true,
    });
  }

  /** Closes the diff tab of an answered card and forgets the proposal. */
  async close(callId: string): Promise<void> {
    if (!this.proposed.delete(callId)) return;
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => {
        const input = t.input;
        if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== PROPOSED_SCHEME) return false;
        return new URLSearchParams(input.modified.query).get('call') === callId;
      });
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  }

  dispose(): void {
    this.registration.dispose();
    this.proposed.clear();
  }
}
