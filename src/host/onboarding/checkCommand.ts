import * as vscode from 'vscode';
import type { SplitpointHost } from '../host';
import { API_KEY_SECRET } from '../host';
import { checkConnection } from './connectionCheck';

/** Splitpoint: Check Server Connection — the walkthrough's first step. */
export async function checkConnectionCommand(host: SplitpointHost): Promise<void> {
  const { settings } = host.currentSettings();
  const apiKey = await host.secrets.get(API_KEY_SECRET);
  const report = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Splitpoint: checking ${settings.endpoint}…` },
    () => checkConnection(settings.endpoint, { model: settings.model || undefined, apiKey }),
  );
  for (const l of [...report.lines, ...report.problems]) host.log.info(`connection check: ${l}`);
  const text = [...report.problems, ...report.lines].join(' · ');
  if (report.ok) void vscode.window.showInformationMessage(`Splitpoint: connected to ${report.endpoint}. ${text}`);
  else {
    const a = await vscode.window.showErrorMessage(`Splitpoint: ${text}`, 'Open Settings', 'Set API Key', 'Show Log');
    if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'splitpoint.endpoint');
    else if (a === 'Set API Key') void vscode.commands.executeCommand('splitpoint.setApiKey');
    else if (a === 'Show Log') host.log.show();
  }
}
