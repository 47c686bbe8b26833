import * as vscode from 'vscode';
import { CONTEXT_KEYS } from './commandTable';
import type { SessionController } from './sessionController';
import { sessionGauge } from './sessionSnapshot';
import { gaugeStatus } from './userFacing';

/** The status bar gauge and the context keys that enable the view's commands. */
export class HostStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('splitpoint.gauge', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'Splitpoint context';
    this.item.command = 'splitpoint.open';
  }

  update(c: SessionController | undefined): void {
    const g = c ? sessionGauge(c.contextTokens(), c.environment) : undefined;
    const s = gaugeStatus(g, c?.isRunning ?? false, c?.environment.settings.asyncCompaction ?? true);
    const item = this.item;
    item.text = s.text;
    item.tooltip = s.tooltip;
    item.backgroundColor =
      s.level === 'normal'
        ? undefined
        : new vscode.ThemeColor(s.level === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    item.show();
    const store = c?.store;
    const setContext = (key: string, value: boolean) => void vscode.commands.executeCommand('setContext', key, value);
    setContext(CONTEXT_KEYS.hasMessages, !!store && store.snapshot.messages.some((m) => m.role !== 'system'));
    setContext(CONTEXT_KEYS.canUndo, !!store && store.snapshot.compactions.length > 0);
    setContext(CONTEXT_KEYS.agentRunning, c?.isRunning ?? false);
  }

  dispose(): void {
    this.item.dispose();
  }
}
