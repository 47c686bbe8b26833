import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/**
 * A child process that opens the log for writing with the real code, as the editor would; close its stdin to let go.
 * `root` is the repository's (the VS Code suite runs bundled, away from this file).
 */
export async function holdInChild(path: string, root = join(__dirname, '..', '..', '..')): Promise<ChildProcess> {
  const script = join(root, 'test', 'unit', 'helpers', 'holdSessionLock.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, path], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before taking the lock`)));
  });
  return child;
}

export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}
