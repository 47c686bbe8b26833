import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AgentTool, ToolResult } from '../../core/agent/tools';
import { optionalInt, stringArg, ToolInputError } from '../../core/agent/tools';
import { AGENT_TOOL_SPECS } from '../../core/agent/toolSpecs';
import { isAllowlisted, runCommandTool } from '../../node/tools/runCommandTool';
import type { SandboxOptions } from '../../node/tools/sandbox';
import { sandboxDescription } from '../../node/tools/sandbox';
import { searchTextTool } from '../../node/tools/searchTool';
import { lstatSync } from 'node:fs';
import { displayPath, insideWorkspace, resolveWorkspacePath } from '../../node/tools/workspacePath';
import { pickFolder, shownPath, type FolderRef } from '../multiRoot';
import type { ApprovalBroker, ApprovalCall, ApprovalPreview } from '../approvals';
import type { ProposedChange } from '../../node/tools/proposedChange';
import { proposeEdit, proposeWrite } from '../../node/tools/proposedChange';

/**
 * The agent's workspace tools on the VS Code API: files are read through
 * open editors first (so unsaved changes count) and workspace.fs otherwise;
 * edits and writes are shown as a diff and applied as a WorkspaceEdit only
 * after the user approved that exact change. Commands run in a child
 * process (VS Code has no API that captures a process's output) with the
 * allowlist, timeout and truncation of the shared Node implementation.
 */
export interface ToolEnv {
  /** The first workspace folder; undefined when no folder is open. */
  root: () => vscode.Uri | undefined;
  /** Every workspace folder, by name (multi-root); absent = the root alone. */
  folders?: () => readonly FolderRef<vscode.Uri>[];
  trusted: () => boolean;
  allowlist: () => readonly string[];
  timeoutSeconds: () => number;
  /** Environment variables passed to commands (splitpoint.tools.commandEnv). */
  commandEnv: () => readonly string[];
  sandbox: () => SandboxOptions;
}

const spec = (name: string) => AGENT_TOOL_SPECS.find((t) => t.function.name === name)!;
const NO_FOLDER: ToolResult = {
  content: 'No folder is open in VS Code. Ask the user to open the project folder; the tools work inside it.',
  isError: true,
};
const RESTRICTED = (what: string): ToolResult => ({
  content:
    `${what} is disabled: this workspace is not trusted (VS Code Restricted Mode). ` +
    'Ask the user to trust the workspace (Manage Workspace Trust) if the change is needed; reading and searching still work.',
  isError: true,
});
const MAX_READ_BYTES = 2 * 1024 * 1024;
const LIST_EXCLUDE = '**/{node_modules,.git,dist,out,target,.venv,__pycache__,.next}/**';

async function resolve(
  env: ToolEnv,
  given: string,
): Promise<{ root: vscode.Uri; uri: vscode.Uri; rel: string; show: (abs: string) => string; link?: string }> {
  const first = env.root();
  if (!first) throw new ToolInputError('no folder is open');
  // Multi-root: "name/path" resolves in the folder of that name, and the path shown back names its folder.
  const folders = env.folders?.() ?? [];
  const picked = pickFolder(folders.length ? folders : [{ name: '', uri: first }], given)!;
  const root = picked.folder.uri;
  const r = resolveWorkspacePath(root.fsPath, picked.rest);
  const rel = shownPath(folders, picked.folder.name, displayPath(root.fsPath, r.path));
  const show = (abs: string) => shownPath(folders, picked.folder.name, displayPath(root.fsPath, abs));
  return { root, uri: vscode.Uri.file(r.path), rel, show, ...(r.link ? { link: r.link } : {}) };
}

/** The text as the user sees it: an open editor's buffer, else the file; undefined when missing. */
export async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    const bytes = await vscode.workspace.fs.readFile(uri);
    return new TextDecoder('utf-8').decode(bytes);
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return undefined;
    throw err;
  }
}

function readFileTool(env: ToolEnv): AgentTool {
  return {
    spec: spec('read_file'),
    needsApproval: () => false,
    describe: (a) => `read ${String(a.path)}`,
    async execute(args) {
      if (!env.root()) return NO_FOLDER;
      const { uri, rel } = await resolve(env, stringArg(args, 'path'));
      let stat: vscode.FileStat;
      try {
        stat = await vscode.workspace.fs.stat(uri);
      } catch {
        return { content: `No such file: ${rel}`, isError: true };
      }
      if (stat.type & vscode.FileType.Directory) return { content: `${rel} is a folder; use list_files.`, isError: true };
      if (stat.size > MAX_READ_BYTES && args.startLine === undefined)
        return { content: `${rel} is ${stat.size} bytes; read it in ranges with startLine/endLine.`, isError: true };
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      let text: string;
      if (open) text = open.getText();
      else {
        const bytes = await vscode.workspace.fs.readFile(uri);
        if (bytes.subarray(0, 8000).includes(0)) return { content: `${rel} looks like a binary file (${stat.size} bytes).`, isError: true };
        text = new TextDecoder('utf-8').decode(bytes);
      }
      const lines = text.split('\n');
      const start = optionalInt(args, 'startLine') ?? 1;
      const end = Math.min(lines.length, optionalInt(args, 'endLine') ?? lines.length);
      if (start < 1 || start > Math.max(1, lines.length) || end < start)
        throw new ToolInputError(`line range ${start}-${end} is outside 1-${lines.length}`);
      const body = lines.slice(start - 1, end).join('\n');
      const dirty = open?.isDirty ? ' (unsaved changes in the editor)' : '';
      return {
        content:
          start === 1 && end === lines.length && !dirty ? body : `[${rel} lines ${start}-${end} of ${lines.length}${dirty}]\n${body}`,
      };
    },
  };
}

function listFilesTool(env: ToolEnv): AgentTool {
  return {
    spec: spec('list_files'),
    needsApproval: () => false,
    describe: (a) => `list ${String(a.path ?? '.')}`,
    async execute(args) {
      if (!env.root()) return NO_FOLDER;
      const { root, uri, show } = await resolve(env, typeof args.path === 'string' && args.path ? args.path : '.');
      const limit = 2000;
      // findFiles honours files.exclude; build output folders are skipped on top.
      const found = await vscode.workspace.findFiles(new vscode.RelativePattern(uri, '**/*'), LIST_EXCLUDE, limit + 1);
      // It follows symlinked folders (search.followSymlinks): names below one that leads out are not the workspace's.
      const inside = insideWorkspace(root.fsPath);
      const paths = found
        .filter((u) => inside(u.fsPath))
        .map((u) => show(u.fsPath))
        .sort();
      if (paths.length === 0) return { content: '(no files)' };
      return {
        content: paths.slice(0, limit).join('\n') + (paths.length > limit ? `\n[stopped at ${limit} files; list a subfolder]` : ''),
      };
    },
  };
}

/** VS Code ships ripgrep; its place moved between releases, so look in both. */
export function bundledRipgrep(appRoot: string): string {
  const exe = process.platform === 'win32' ? 'rg.exe' : 'rg';
  for (const dir of ['node_modules', 'node_modules.asar.unpacked']) {
    const p = join(appRoot, dir, '@vscode', 'ripgrep', 'bin', exe);
    if (existsSync(p)) return p;
  }
  return 'rg';
}

function searchTool(env: ToolEnv): AgentTool {
  let inner: { root: string; tool: AgentTool } | undefined;
  return {
    spec: spec('search_text'),
    needsApproval: () => false,
    describe: (a) => `search /${String(a.pattern)}/`,
    async execute(args, ctx) {
      const root = env.root();
      if (!root) return NO_FOLDER;
      if (inner?.root !== root.fsPath) inner = { root: root.fsPath, tool: searchTextTool(root.fsPath, bundledRipgrep(vscode.env.appRoot)) };
      return inner.tool.execute(args, ctx);
    },
  };
}

/**
 * Computes what an edit or write would do, for the approval card and for
 * the check at apply time. The host's preview function and the tools share it.
 */
export async function proposeChange(env: ToolEnv, tool: string, args: Record<string, unknown>): Promise<ProposedChange> {
  const path = typeof args.path === 'string' ? args.path : '';
  let target: { uri: vscode.Uri; rel: string; link?: string };
  try {
    target = await resolve(env, stringArg(args, 'path'));
  } catch (err) {
    return { ok: false, path, error: (err as Error).message };
  }
  const before = await currentText(target.uri);
  const change =
    tool === 'edit_file' ? proposeEdit(target.rel, before, args.old_text, args.new_text) : proposeWrite(target.rel, before, args.content);
  // The card names the link the path went through, so the user sees where the write really lands.
  return change.ok && target.link ? { ...change, summary: `${change.summary} (${target.link})` } : change;
}

/** The resolved path holds no link; one there now was swapped in after the check, and would be followed. */
function swappedForLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

async function applyChange(env: ToolEnv, change: Extract<ProposedChange, { ok: true }>): Promise<ToolResult> {
  const { uri, rel } = await resolve(env, change.path);
  if (swappedForLink(uri.fsPath)) return { content: `Not applied: ${rel} became a symbolic link after it was checked.`, isError: true };
  const edit = new vscode.WorkspaceEdit();
  let doc: vscode.TextDocument | undefined;
  if (change.before === undefined) {
    edit.createFile(uri, { ignoreIfExists: false, contents: new TextEncoder().encode(change.after) });
  } else {
    doc = await vscode.workspace.openTextDocument(uri);
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), change.after);
  }
  const wasDirty = doc?.isDirty ?? false;
  if (!(await vscode.workspace.applyEdit(edit)))
    return { content: `VS Code refused the edit to ${rel} (the file may be read-only).`, isError: true };
  // Saved so that commands the agent runs next (tests, builds) see the change;
  // a file the user was already editing is left unsaved, with their changes.
  if (doc && !wasDirty) await doc.save();
  return {
    content:
      `${change.before === undefined ? 'Created' : 'Edited'} ${rel}` +
      `${wasDirty ? ' (applied in the open editor, not saved: the file had unsaved changes)' : ''}.`,
  };
}

function changeTool(env: ToolEnv, broker: ApprovalBroker, name: 'edit_file' | 'write_file'): AgentTool {
  return {
    spec: spec(name),
    // Restricted Mode: nothing to approve, the call is refused with the reason.
    needsApproval: () => env.trusted(),
    describe: (a) => `${name === 'edit_file' ? 'edit' : 'write'} ${String(a.path)}`,
    async execute(args, ctx) {
      if (!env.trusted()) return RESTRICTED(name === 'edit_file' ? 'Editing files' : 'Writing files');
      if (!env.root()) return NO_FOLDER;
      const now = await proposeChange(env, name, args);
      if (!now.ok) return { content: now.error, isError: true };
      const approval = broker.takeApproved(ctx.callId);
      if (!approval.approved) return { content: `Not applied: ${now.path} was not approved.`, isError: true };
      const seen = approval.data as ProposedChange | undefined;
      if (seen && seen.ok && seen.after !== now.after) {
        return {
          content: `Not applied: ${now.path} changed after the user approved the diff. Read it again and redo the change.`,
          isError: true,
        };
      }
      return applyChange(env, now);
    },
  };
}

function commandTool(env: ToolEnv): AgentTool {
  const build = () => {
    const root = env.root();
    if (!root) return undefined;
    const o = {
      allowlist: env.allowlist(),
      defaultTimeoutSeconds: env.timeoutSeconds(),
      maxOutputChars: 400_000,
      commandEnv: env.commandEnv(),
      sandbox: env.sandbox(),
    };
    return runCommandTool(root.fsPath, o);
  };
  return {
    spec: spec('run_command'),
    needsApproval: (args) => {
      const root = env.root();
      return env.trusted() && !(root && typeof args.command === 'string' && isAllowlisted(args.command, env.allowlist(), root.fsPath));
    },
    describe: (a) => `run (${sandboxDescription(env.sandbox())}): ${String(a.command)}`,
    async execute(args, ctx) {
      if (!env.trusted()) return RESTRICTED('Running commands');
      const tool = build();
      if (!tool) return NO_FOLDER;
      return tool.execute(args, ctx);
    },
  };
}

/** In the order of AGENT_TOOL_SPECS, so the request prefix matches the CLI's byte for byte. */
export function vscodeWorkspaceTools(env: ToolEnv, broker: ApprovalBroker): AgentTool[] {
  return [
    readFileTool(env),
    listFilesTool(env),
    searchTool(env),
    changeTool(env, broker, 'edit_file'),
    changeTool(env, broker, 'write_file'),
    commandTool(env),
  ];
}

/** The approval card for a call: a diff for edits and writes, the command text for commands. */
export async function previewCall(
  env: ToolEnv,
  call: ApprovalCall,
  remember: (callId: string, change: Extract<ProposedChange, { ok: true }>) => void,
): Promise<ApprovalPreview> {
  if (call.tool === 'edit_file' || call.tool === 'write_file') {
    const change = await proposeChange(env, call.tool, call.args);
    // An edit that cannot apply changes nothing: it runs and reports the error to the model without asking.
    if (!change.ok) return { kind: 'noop' };
    remember(call.id, change);
    return { kind: 'ask', detail: { summary: change.summary, path: change.path, diff: change.diff }, data: change };
  }
  if (call.tool === 'run_command') {
    const command = typeof call.args.command === 'string' ? call.args.command : '';
    const t = optionalInt(call.args, 'timeoutSeconds') ?? env.timeoutSeconds();
    return { kind: 'ask', detail: { summary: `run in the workspace (time limit ${t} s; ${sandboxDescription(env.sandbox())})`, command } };
  }
  return { kind: 'ask', detail: { summary: call.summary } };
}
