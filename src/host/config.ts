import * as vscode from 'vscode';
import type { SettingKey, SettingsReport } from '../core/config/settings';
import { readSettings, SETTING_SECTION } from '../core/config/settings';

/** Reads the `splitpoint.*` settings through the pure validator. */
export function readVscodeSettings(): SettingsReport {
  const cfg = vscode.workspace.getConfiguration(SETTING_SECTION);
  return readSettings((key: SettingKey) => cfg.get(key));
}

/**
 * Where to write a setting the user changed from the view or a command: the
 * scope that currently defines it, so a workspace value is not shadowed by
 * a new user value (or the other way round).
 */
export async function updateSetting(key: SettingKey, value: unknown): Promise<void> {
  const cfg = vscode.workspace.getConfiguration(SETTING_SECTION);
  const inspect = cfg.inspect(key);
  const target =
    inspect?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspect?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await cfg.update(key, value, target);
}
