import { spawn } from 'node:child_process';
import type { AgentTool } from '../../core/agent/tools';
import { optionalInt, stringArg } from '../../core/agent/tools';
import { AGENT_TOOL_SPECS } from '../../core/agent/toolSpecs';
import { commandEnvironment, DEFAULT_COMMAND_ENV } from './commandEnv';
import { isAllowlisted } from './commandPolicy';
import type { SandboxOptions } from './sandbox';
import { sandboxArgv, sandboxDescription } from './sandbox';

export { checkAllowlisted, isAllowlisted } from './commandPolicy';

export interface RunCommandOptions {
  /** Argument-vector prefixes that run without approval (the rest of the words is checked too; see commandPolicy). */
  allowlist: readonly string[];
  defaultTimeoutSeconds: number;
  /** Captured output beyond this is dropped from the middle (the agent loop caps further). */
  maxOutputChars: number;
  /** Environment variables passed to commands (default DEFAULT_COMMAND_ENV); nothing else is inherited. */
  commandEnv?: readonly string[];
  /** bwrap confinement; default auto with no network. */
  sandbox?: SandboxOptions;
}

export const DEFAULT_SANDBOX: SandboxOptions = { mode: 'auto', allowNetwork: false };

/** run_command: a shell in the workspace, with a timeout, captured stdout+stderr and the exit code. */
export function runCommandTool(root: string, opts: RunCommandOptions): AgentTool {
  return {
    spec: AGENT_TOOL_SPECS.find((t) => t.function.name === 'run_command')!,
    needsApproval: (args) => !(typeof args.command === 'string' && isAllowlisted(args.command, opts.allowlist, root)),
    describe: (a) => `run (${sandboxDescription(opts.sandbox ?? DEFAULT_SANDBOX)}): ${String(a.command)}`,
    execute(args, ctx) {
      const command = stringArg(args, 'command');
      const timeout = 1000 * Math.min(3600, optionalInt(args, 'timeoutSeconds') ?? opts.defaultTimeoutSeconds);
      return new Promise((resolve) => {
        const shell = process.platform === 'win32' ? ['cmd.exe', '/c', command] : ['/bin/sh', '-c', command];
        const argv = [...(sandboxArgv(root, opts.sandbox ?? DEFAULT_SANDBOX) ?? []), ...shell];
        const child = spawn(argv[0]!, argv.slice(1), {
          cwd: root,
          env: commandEnvironment(opts.commandEnv ?? DEFAULT_COMMAND_ENV),
          detached: process.platform !== 'win32',
        });
        let out = '';
        let dropped = 0;
        const take = (d: Buffer) => {
          const s = d.toString('utf8');
          if (out.length + s.length <= opts.maxOutputChars) out += s;
          else {
            const room = Math.max(0, opts.maxOutputChars - out.length);
            out += s.slice(0, room);
            dropped += s.length - room;
          }
        };
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        let killedFor: string | undefined;
        const kill = (why: string) => {
          killedFor ??= why;
          try {
            if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
            else child.kill('SIGKILL');
          } catch {
            // already gone
          }
        };
        const timer = setTimeout(() => kill(`timed out after ${timeout / 1000} s`), timeout);
        const onAbort = () => kill('stopped by the user');
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        child.on('error', (err) => {
          clearTimeout(timer);
          resolve({ content: `Could not start the command: ${err.message}`, isError: true });
        });
        child.on('close', (code, sig) => {
          clearTimeout(timer);
          ctx.signal.removeEventListener('abort', onAbort);
          const tail = dropped > 0 ? `\n[${dropped} more chars of output not captured]` : '';
          const status = killedFor ? `killed: ${killedFor}` : sig ? `killed by ${sig}` : `exit code ${code}`;
          resolve({ content: `$ ${command}\n${out}${tail}\n[${status}]`, isError: killedFor !== undefined || code !== 0 });
        });
      });
    },
  };
}
