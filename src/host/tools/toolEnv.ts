import * as vscode from 'vscode';
import { DEFAULT_COMMAND_ENV } from '../../core/config/commandEnvDefaults';
import type { SplitpointSettings } from '../../core/config/settings';
import type { ToolEnv } from './workspaceTools';

/** The workspace tools' view of VS Code: its folders and trust, and the settings as they are at each call. */
export function hostToolEnv(settings: () => SplitpointSettings | undefined): ToolEnv {
  return {
    root: () => vscode.workspace.workspaceFolders?.[0]?.uri,
    folders: () => (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, uri: f.uri })),
    trusted: () => vscode.workspace.isTrusted,
    // Restricted Mode ignores the allowlist: nothing runs without the user there.
    allowlist: () => (vscode.workspace.isTrusted ? (settings()?.commandAllowlist ?? []) : []),
    timeoutSeconds: () => settings()?.commandTimeoutSeconds ?? 120,
    commandEnv: () => settings()?.commandEnv ?? [...DEFAULT_COMMAND_ENV],
    sandbox: () => ({
      mode: settings()?.commandSandbox ?? 'auto',
      allowNetwork: settings()?.commandNetwork ?? false,
    }),
  };
}
