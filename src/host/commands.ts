import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { toWire } from '../core/messages';
import { SessionCorruptError } from '../core/session/errors';
import type { CommandId } from './commandTable';
import { updateSetting } from './config';
import type { SplitpointHost } from './host';
import { apiKeySecret, separateRoles, type KeyRole } from './apiKeys';
import { checkConnectionCommand } from './onboarding/checkCommand';
import { VIEW_ID } from './sessionViewProvider';

/**
 * The handler of every command in the table. The Record type makes a
 * command in the table without a handler (or the reverse) a compile error.
 */
export function commandHandlers(host: SplitpointHost, review: { open(): void }): Record<CommandId, (...args: unknown[]) => unknown> {
  const controller = () => host.ensureStarted();
  return {
    'splitpoint.open': () => vscode.commands.executeCommand(`${VIEW_ID}.focus`),
    'splitpoint.newSession': async () => {
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
      await host.newSession();
    },
    'splitpoint.compactNow': async () => {
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
      await (await controller()).compact(null, null);
    },
    'splitpoint.compactWithFocus': async () => {
      const c = await controller();
      const current = c.store.snapshot.focus;
      const focus = await vscode.window.showInputBox({
        title: 'Compact with Focus',
        prompt: 'What must survive compaction? It also becomes the standing focus for later automatic compactions.',
        placeHolder: 'e.g. keep the DB migration plan and the failing test names',
        value: current ?? '',
        ignoreFocusOut: true,
      });
      if (focus === undefined) return;
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
      await c.compact(focus.trim() || null, null);
    },
    'splitpoint.undoCompaction': async () => (await controller()).undo(),
    'splitpoint.reviewCompaction': async () => {
      await host.ensureStarted();
      review.open();
    },
    'splitpoint.checkConnection': () => checkConnectionCommand(host),
    // Each of these takes its answer as an argument too (scripts, keybindings, tests) instead of asking.
    'splitpoint.setApiKey': (key?: unknown, role?: unknown) =>
      setApiKey(host, typeof key === 'string' ? key : undefined, isRole(role) ? role : undefined),
    'splitpoint.selectModel': (id?: unknown) => selectModel(host, typeof id === 'string' ? id : undefined),
    'splitpoint.exportSession': (uri?: unknown, format?: unknown) =>
      exportSession(host, uri instanceof vscode.Uri ? uri : undefined, isFormat(format) ? format : undefined),
    'splitpoint.importSession': (uri?: unknown) => importSession(host, uri instanceof vscode.Uri ? uri : undefined),
    'splitpoint.showLog': () => host.log.show(),
  };
}

type ExportFormat = 'log' | 'active' | 'originals';
function isFormat(x: unknown): x is ExportFormat {
  return x === 'log' || x === 'active' || x === 'originals';
}

function isRole(x: unknown): x is KeyRole {
  return x === 'agent' || x === 'compactor' || x === 'judge';
}

const ROLE_LABEL: Record<KeyRole, string> = { agent: 'Agent', compactor: 'Compactor', judge: 'Judge' };

/** With the compactor or the judge on a server of its own, asks whose key this is. */
async function setApiKey(host: SplitpointHost, given: string | undefined, givenRole: KeyRole | undefined): Promise<void> {
  const s = host.currentSettings().settings;
  const roles = separateRoles(s);
  let role: KeyRole = givenRole ?? 'agent';
  if (!givenRole && given === undefined && roles.length > 1) {
    const url = (r: KeyRole) => (r === 'agent' ? s.endpoint : r === 'compactor' ? s.compactor.endpoint : s.judgeEndpoint.endpoint) ?? '';
    const pick = await vscode.window.showQuickPick(
      roles.map((r) => ({ label: ROLE_LABEL[r], description: url(r), role: r })),
      { title: 'Splitpoint: API Key for…', placeHolder: "The compactor and the judge use the agent's key unless they have their own" },
    );
    if (!pick) return;
    role = pick.role;
  }
  const key =
    given ??
    (await vscode.window.showInputBox({
      title: `Splitpoint: API Key (${ROLE_LABEL[role]})`,
      prompt:
        "The key your server expects (vLLM --api-key). Stored in VS Code's secret storage, never in settings. Leave empty to remove it.",
      password: true,
      ignoreFocusOut: true,
    }));
  if (key === undefined) return;
  const secrets = host.secrets;
  const secret = apiKeySecret(role);
  if (key.trim() === '') {
    await secrets.delete(secret);
    await host.reloadApiKeys();
    host.log.info(`API key removed (${role})`);
    void vscode.window.showInformationMessage('Splitpoint: API key removed.');
  } else {
    await secrets.store(secret, key.trim());
    await host.reloadApiKeys();
    host.log.info(`API key updated (${role})`);
    void vscode.window.showInformationMessage('Splitpoint: API key saved in secret storage.');
  }
}

async function selectModel(host: SplitpointHost, given: string | undefined): Promise<void> {
  await host.ensureStarted();
  if (given !== undefined) {
    await updateSetting('model', given);
    return;
  }
  const e = host.endpointsForCommands;
  if (!e) return;
  let models;
  try {
    const progress = { location: vscode.ProgressLocation.Notification, title: `Splitpoint: asking ${e.client.baseURL} for its models…` };
    models = await vscode.window.withProgress(progress, () => e.client.listModels());
  } catch (err) {
    void vscode.window.showErrorMessage(`Splitpoint: ${(err as Error).message}`, 'Open Settings').then((open) => {
      if (open) void vscode.commands.executeCommand('workbench.action.openSettings', 'splitpoint.endpoint');
    });
    return;
  }
  if (models.length === 0) {
    void vscode.window.showWarningMessage(`Splitpoint: the server at ${e.client.baseURL} lists no models.`);
    return;
  }
  const current = vscode.workspace.getConfiguration('splitpoint').get<string>('model') ?? '';
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'First model the server lists', description: models[0]!.id, id: '' },
      ...models.map((m) => ({
        label: m.id,
        description: m.maxModelLen ? `${m.maxModelLen.toLocaleString('en-US')} tokens` : 'window not reported',
        id: m.id,
      })),
    ].map((i) => ({ ...i, picked: i.id === current, detail: i.id === current ? 'current' : undefined })),
    { title: 'Splitpoint: Select Model', placeHolder: `Models on ${e.client.baseURL}` },
  );
  if (!picked) return;
  await updateSetting('model', picked.id);
}

async function exportSession(host: SplitpointHost, givenUri: vscode.Uri | undefined, givenFormat: ExportFormat | undefined): Promise<void> {
  const c = await host.ensureStarted();
  const inferred: ExportFormat | undefined = givenFormat ?? (givenUri ? (givenUri.path.endsWith('.jsonl') ? 'log' : 'active') : undefined);
  const format = inferred
    ? { id: inferred }
    : await vscode.window.showQuickPick(
        [
          {
            label: 'Splitpoint session log (.jsonl)',
            detail: 'Everything: originals, compactions, undos, pins. Import it back to continue.',
            id: 'log' as const,
          },
          {
            label: 'OpenAI messages, active context (.json)',
            detail: 'What the agent sends now: system, pinned block, summary, recent messages.',
            id: 'active' as const,
          },
          { label: 'OpenAI messages, all originals (.json)', detail: 'The full uncompacted conversation.', id: 'originals' as const },
        ],
        { title: 'Splitpoint: Export Session' },
      );
  if (!format) return;
  const stem = (c.store.snapshot.title ?? host.activeSessionId ?? 'session').replace(/[^\w.-]+/g, '-').slice(0, 60);
  const ext = format.id === 'log' ? 'jsonl' : 'json';
  const target =
    givenUri ??
    (await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir()), `${stem}.${ext}`),
      filters: format.id === 'log' ? { 'Splitpoint session': ['jsonl'] } : { 'JSON messages': ['json'] },
      title: 'Export Session',
    }));
  if (!target) return;
  let text: string;
  if (format.id === 'log') {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.file(c.store.path));
    text = new TextDecoder().decode(bytes);
  } else {
    const messages = format.id === 'active' ? c.store.active().messages : c.store.snapshot.messages;
    text = JSON.stringify(messages.map(toWire), null, 2) + '\n';
  }
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(text));
  host.log.info(`exported session ${host.activeSessionId} as ${format.id} (${text.length} chars)`);
  // Not awaited: the command is done when the file is written, not when the toast is dismissed.
  void vscode.window.showInformationMessage(`Splitpoint: exported to ${vscode.workspace.asRelativePath(target)}.`, 'Open').then((open) => {
    if (open) void vscode.window.showTextDocument(target);
  });
}

async function importSession(host: SplitpointHost, givenUri: vscode.Uri | undefined): Promise<void> {
  await host.ensureStarted();
  const picked = givenUri
    ? [givenUri]
    : await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { 'Sessions and message arrays': ['jsonl', 'json'], 'All files': ['*'] },
        title: 'Import Session: a Splitpoint log or an OpenAI messages array',
      });
  const uri = picked?.[0];
  if (!uri) return;
  const library = host.sessionLibrary!;
  try {
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    const { id, store, kind } = await library.importText(text, uri.fsPath);
    await host.attach(id, store);
    host.log.info(`imported ${kind} from a ${text.length}-char file as session ${id}`);
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    void vscode.window.showInformationMessage(`Splitpoint: imported ${store.snapshot.messages.length} messages as a new session.`);
  } catch (err) {
    const message =
      err instanceof SessionCorruptError
        ? err.message.replace(/ The file has not been changed.*$/, ' Nothing was imported.')
        : (err as Error).message;
    host.log.warn(`import failed: ${message}`);
    void vscode.window.showErrorMessage(`Splitpoint: ${message}`);
  }
}
