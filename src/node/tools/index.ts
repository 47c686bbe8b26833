import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { AgentTool } from '../../core/agent/tools';
import type { SpillPort } from '../../core/agent/toolOutput';
import { editFileTool, listFilesTool, readFileTool, writeFileTool } from './fileTools';
import { runCommandTool } from './runCommandTool';
import type { RunCommandOptions } from './runCommandTool';
import { searchTextTool } from './searchTool';

/** The Node implementations of the agent's workspace tools, confined to `root`. */
export function nodeWorkspaceTools(root: string, opts: Partial<RunCommandOptions> = {}): AgentTool[] {
  return [
    readFileTool(root),
    listFilesTool(root),
    searchTextTool(root),
    editFileTool(root),
    writeFileTool(root),
    runCommandTool(root, {
      allowlist: opts.allowlist ?? [],
      defaultTimeoutSeconds: opts.defaultTimeoutSeconds ?? 120,
      maxOutputChars: opts.maxOutputChars ?? 400_000,
      ...(opts.commandEnv ? { commandEnv: opts.commandEnv } : {}),
      ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    }),
  ];
}

/**
 * Full tool outputs that were too big for the session go to files next to it.
 * Each file is created exclusively: a reused call id, or two ids that sanitise
 * to one name, get a counter suffix instead of replacing an earlier output.
 */
export function fileSpill(dir: string): SpillPort {
  return {
    async spill(callId, text) {
      await fs.mkdir(dir, { recursive: true });
      const base = callId.replace(/[^\w.-]/g, '_');
      for (let n = 1; ; n++) {
        const path = join(dir, n === 1 ? `${base}.txt` : `${base}-${n}.txt`);
        try {
          await fs.writeFile(path, text, { flag: 'wx' });
          return path;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
    },
    // For recall: the spill files are outside the workspace, where the agent's file tools cannot read them.
    async *spilled() {
      let names: string[];
      try {
        names = await fs.readdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const name of names.filter((n) => n.endsWith('.txt')).sort()) {
        // One file gone or unreadable (removed by hand since the listing) does not hide the others from recall.
        const text = await fs.readFile(join(dir, name), 'utf8').catch(() => undefined);
        if (text !== undefined) yield { name, text };
      }
    },
  };
}
