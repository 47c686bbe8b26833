import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentTool } from '../../core/agent/tools';
import { optionalInt, stringArg, ToolInputError } from '../../core/agent/tools';
import { AGENT_TOOL_SPECS } from '../../core/agent/toolSpecs';
import type { ProposedChange } from './proposedChange';
import { proposeEdit, proposeWrite } from './proposedChange';
import { displayPath, linkNote, resolveInWorkspace, resolveWorkspacePath, writeNoFollow } from './workspacePath';

function spec(name: string) {
  const s = AGENT_TOOL_SPECS.find((t) => t.function.name === name);
  if (!s) throw new Error(`no spec for ${name}`);
  return s;
}

const MAX_READ_BYTES = 2 * 1024 * 1024;
const SKIP_DIRS = new Set(['.git', 'node_modules', 'dist', 'out', '.next', 'target', '.venv', '__pycache__']);

export function readFileTool(root: string): AgentTool {
  return {
    spec: spec('read_file'),
    needsApproval: () => false,
    describe: (a) => `read ${String(a.path)}`,
    async execute(args) {
      const path = await resolveInWorkspace(root, stringArg(args, 'path'));
      const stat = await fs.stat(path).catch(() => undefined);
      if (!stat) return { content: `No such file: ${stringArg(args, 'path')}`, isError: true };
      if (stat.isDirectory()) return { content: `${stringArg(args, 'path')} is a folder; use list_files.`, isError: true };
      if (stat.size > MAX_READ_BYTES && args.startLine === undefined) {
        return { content: `${stringArg(args, 'path')} is ${stat.size} bytes; read it in ranges with startLine/endLine.`, isError: true };
      }
      const buf = await fs.readFile(path);
      if (buf.subarray(0, 8000).includes(0))
        return { content: `${stringArg(args, 'path')} looks like a binary file (${stat.size} bytes).`, isError: true };
      const lines = buf.toString('utf8').split('\n');
      const start = optionalInt(args, 'startLine') ?? 1;
      const end = Math.min(lines.length, optionalInt(args, 'endLine') ?? lines.length);
      if (start < 1 || start > Math.max(1, lines.length) || end < start)
        throw new ToolInputError(`line range ${start}-${end} is outside 1-${lines.length}`);
      const body = lines.slice(start - 1, end).join('\n');
      return { content: start === 1 && end === lines.length ? body : `[lines ${start}-${end} of ${lines.length}]\n${body}` };
    },
  };
}

export function listFilesTool(root: string): AgentTool {
  return {
    spec: spec('list_files'),
    needsApproval: () => false,
    describe: (a) => `list ${String(a.path ?? '.')}`,
    async execute(args) {
      const base = await resolveInWorkspace(root, typeof args.path === 'string' && args.path ? args.path : '.');
      const out: string[] = [];
      const limit = 2000;
      const walk = async (dir: string): Promise<void> => {
        if (out.length >= limit) return;
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
        entries.sort((a, b) => a.name.localeCompare(b.name));
        for (const e of entries) {
          if (out.length >= limit) return;
          const p = join(dir, e.name);
          if (e.isDirectory()) {
            if (SKIP_DIRS.has(e.name)) continue;
            out.push(`${displayPath(root, p)}/`);
            await walk(p);
          } else out.push(displayPath(root, p));
        }
      };
      await walk(base);
      return { content: out.length === 0 ? '(empty)' : out.join('\n') + (out.length >= limit ? `\n[stopped at ${limit} entries]` : '') };
    },
  };
}

/** Reads the current text for a proposal: undefined when the file does not exist. */
async function currentText(path: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Resolves, proposes (the shared logic the host uses too) and writes without following links. */
async function applyProposal(
  root: string,
  args: Record<string, unknown>,
  propose: (rel: string, before: string | undefined) => ProposedChange,
) {
  const { path } = resolveWorkspacePath(root, stringArg(args, 'path'));
  const rel = displayPath(root, path);
  const change = propose(rel, await currentText(path));
  if (!change.ok) return { change, rel };
  await fs.mkdir(dirname(path), { recursive: true });
  await writeNoFollow(path, change.after);
  return { change, rel };
}

export function writeFileTool(root: string): AgentTool {
  return {
    spec: spec('write_file'),
    needsApproval: () => true,
    describe: (a) => `write ${String(a.path)}${linkNote(root, a.path)} (${typeof a.content === 'string' ? a.content.length : 0} chars)`,
    async execute(args) {
      if (typeof args.content !== 'string') throw new ToolInputError('"content" must be a string');
      const { change, rel } = await applyProposal(root, args, (p, before) => proposeWrite(p, before, args.content));
      if (!change.ok) return { content: change.error, isError: true };
      return { content: `Wrote ${rel} (${change.after.length} chars).` };
    },
  };
}

export function editFileTool(root: string): AgentTool {
  return {
    spec: spec('edit_file'),
    needsApproval: () => true,
    describe: (a) => `edit ${String(a.path)}${linkNote(root, a.path)}`,
    async execute(args) {
      const { change, rel } = await applyProposal(root, args, (p, before) => proposeEdit(p, before, args.old_text, args.new_text));
      if (!change.ok) return { content: change.error, isError: true };
      return { content: `Edited ${rel}.` };
    },
  };
}
