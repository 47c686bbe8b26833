import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { AgentTool } from '../../core/agent/tools';
import { stringArg, ToolInputError } from '../../core/agent/tools';
import { AGENT_TOOL_SPECS } from '../../core/agent/toolSpecs';
import { displayPath, resolveInWorkspace } from './workspacePath';

const MAX_MATCHES = 200;

/**
 * search_text: ripgrep when it is installed (fast, respects .gitignore), a
 * plain recursive scan otherwise, so the CLI works on any machine.
 */
export function searchTextTool(root: string, rgPath = 'rg'): AgentTool {
  return {
    spec: AGENT_TOOL_SPECS.find((t) => t.function.name === 'search_text')!,
    needsApproval: () => false,
    describe: (a) => `search /${String(a.pattern)}/`,
    async execute(args, ctx) {
      const pattern = stringArg(args, 'pattern');
      let re: RegExp;
      try {
        re = new RegExp(pattern);
      } catch (err) {
        throw new ToolInputError(`pattern is not a valid regular expression: ${(err as Error).message}`);
      }
      const base = await resolveInWorkspace(root, typeof args.path === 'string' && args.path ? args.path : '.');
      const viaRg = await ripgrep(rgPath, pattern, base, root, ctx.signal).catch(() => undefined);
      const lines = viaRg ?? (await scan(re, base, root));
      if (lines.length === 0) return { content: `No matches for /${pattern}/.` };
      return {
        content:
          lines.slice(0, MAX_MATCHES).join('\n') +
          (lines.length > MAX_MATCHES ? `\n[${lines.length - MAX_MATCHES} more matches not shown]` : ''),
      };
    },
  };
}

function ripgrep(rg: string, pattern: string, base: string, root: string, signal: AbortSignal): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(rg, ['--line-number', '--no-heading', '--color', 'never', '--max-count', '50', '-e', pattern, base], {
      signal,
      cwd: root,
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (out.length < 2_000_000) out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && code !== 1) return reject(new Error(`rg exited with ${code}`));
      resolve(
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => (l.startsWith(base) ? displayPath(root, l.slice(0, l.indexOf(':'))) + l.slice(l.indexOf(':')) : l)),
      );
    });
  });
}

async function scan(re: RegExp, base: string, root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (out.length > MAX_MATCHES) return;
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name === '.git' || e.name === 'node_modules') continue;
        await walk(p);
      } else if (e.isFile()) {
        const buf = await fs.readFile(p).catch(() => undefined);
        if (!buf || buf.length > 4_000_000 || buf.subarray(0, 8000).includes(0)) continue;
        buf
          .toString('utf8')
          .split('\n')
          .forEach((line, i) => {
            if (re.test(line)) out.push(`${displayPath(root, p)}:${i + 1}:${line.length > 400 ? line.slice(0, 400) + '…' : line}`);
          });
      }
    }
  };
  const stat = await fs.stat(base);
  if (stat.isDirectory()) await walk(base);
  else await walk(join(base, '..'));
  return out;
}
