import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Confinement for run_command on Linux with bubblewrap (`bwrap`, Debian
 * package bubblewrap): the whole filesystem is mounted read-only, the
 * workspace read-write, /tmp is a private empty tmpfs, and the network is
 * cut unless the user allowed it. Elsewhere, or where bwrap cannot create its
 * namespaces (containers that forbid user namespaces), commands run
 * unconfined and the approval prompt says so and why.
 */
export interface SandboxOptions {
  /** 'auto': use bwrap when it works; 'off': never. */
  mode: 'auto' | 'off';
  allowNetwork: boolean;
}

export type SandboxStatus = { available: true; bwrap: string } | { available: false; reason: string };

let probed: { key: string; status: SandboxStatus } | undefined;

function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Whether bwrap exists and can start a sandbox here; probed once per process (one ~10 ms run). */
export function sandboxStatus(bwrapPath?: string): SandboxStatus {
  const key = bwrapPath ?? '';
  if (probed?.key === key) return probed.status;
  const status = probe(bwrapPath);
  probed = { key, status };
  return status;
}

function probe(bwrapPath: string | undefined): SandboxStatus {
  if (process.platform !== 'linux')
    return { available: false, reason: `sandboxing needs Linux with bubblewrap; this is ${process.platform}` };
  const bwrap = bwrapPath ?? findOnPath('bwrap');
  if (!bwrap) return { available: false, reason: 'bubblewrap is not installed (apt-get install bubblewrap)' };
  const r = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--', 'true'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (r.status === 0) return { available: true, bwrap };
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0];
  return { available: false, reason: `bwrap cannot create a sandbox here (${why}; user namespaces may be disabled)` };
}

/** The argv prefix that runs a command inside the sandbox, or undefined when it runs unconfined. */
export function sandboxArgv(root: string, opts: SandboxOptions, status = sandboxStatus()): string[] | undefined {
  if (opts.mode === 'off' || !status.available) return undefined;
  const ws = realpathSync(root);
  return [
    status.bwrap,
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // /tmp first, then the workspace: a workspace under /tmp stays visible and writable.
    '--tmpfs',
    '/tmp',
    '--bind',
    ws,
    ws,
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    ...(opts.allowNetwork ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--chdir',
    ws,
    '--setenv',
    'TMPDIR',
    '/tmp',
    '--',
  ];
}

/** One line for the approval prompt: what confines this command, or why nothing does. */
export function sandboxDescription(opts: SandboxOptions, status = sandboxStatus()): string {
  if (opts.mode === 'off') return 'not sandboxed (sandbox turned off in the settings)';
  if (!status.available) return `not sandboxed: ${status.reason}`;
  return `sandboxed: writes only to the workspace and a private /tmp, ${opts.allowNetwork ? 'network allowed' : 'no network'}`;
}
