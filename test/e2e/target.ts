/**
 * Where the e2e suite runs VS Code.
 *
 * - `code-server` (default, and the only one that works on machines that reach
 *   just npm and Debian): code-server from test/vscode/setup.mjs, the VSIX
 *   installed with --install-extension, headless Debian Chromium.
 * - `electron` (SPLITPOINT_E2E_TARGET=electron, where VS Code can be
 *   downloaded): @vscode/test-electron downloads desktop VS Code, its CLI
 *   installs the VSIX, and Playwright's Electron driver opens the window. The
 *   steps are the same, they only see a Page.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import {
  installVsix,
  launchBrowser,
  startCodeServer,
  tempDir,
  waitForWorkbench,
  workbenchUrl,
  writeUserSettings,
  ROOT,
} from '../vscode/harness.mjs';
import { ensureVscode, VSCODE_VERSION } from '../vscode/setup.mjs';

export interface Target {
  name: string;
  page: Page;
  /** Reloads the window (code-server: the page; electron: restart on the same profile). */
  reload(): Promise<void>;
  close(): Promise<void>;
  log(): string;
  /** Copies the extension hosts' logs (Splitpoint's output channel among them) into `dir`, before close removes them. */
  keepLogs(dir: string): void;
}

export interface TargetOptions {
  vsix: string;
  settings: Record<string, unknown>;
}

export const SAMPLE_WORKSPACE = join(ROOT, 'test', 'fixtures', 'sample-workspace');

export async function launchTarget(opts: TargetOptions): Promise<Target> {
  const work = tempDir('splitpoint-e2e-');
  const workspace = join(work, 'workspace');
  cpSync(SAMPLE_WORKSPACE, workspace, { recursive: true });
  const userDataDir = join(work, 'user-data');
  const extensionsDir = join(work, 'extensions');
  mkdirSync(extensionsDir, { recursive: true });
  writeUserSettings(userDataDir, opts.settings);
  const kind = process.env.SPLITPOINT_E2E_TARGET ?? 'code-server';
  if (kind === 'electron') return launchElectron(opts, work, workspace, userDataDir, extensionsDir);

  ensureVscode({ quiet: true });
  installVsix(opts.vsix, { userDataDir, extensionsDir });
  const cs = await startCodeServer({ folder: workspace, userDataDir, extensionsDir });
  const browser = await launchBrowser();
  const url = workbenchUrl(cs.url, { folder: workspace });
  browser.page.setDefaultTimeout(15_000);
  await browser.page.goto(url);
  await waitForWorkbench(browser.page);
  return {
    name: 'code-server',
    page: browser.page,
    async reload() {
      await browser.page.reload();
      await waitForWorkbench(browser.page);
    },
    async close() {
      await browser.close();
      await cs.close();
      rmSync(work, { recursive: true, force: true });
    },
    log: () => cs.output(),
    keepLogs: (dir) => copyLogs(join(userDataDir, 'logs'), dir),
  };
}

/** Every log under `from` (one folder per window load: a reload's hosts each have their own), flattened into `to`. */
function copyLogs(from: string, to: string): void {
  if (!existsSync(from)) return;
  mkdirSync(to, { recursive: true });
  for (const rel of readdirSync(from, { recursive: true }) as string[]) {
    if (rel.endsWith('.log')) cpSync(join(from, rel), join(to, rel.replace(/[\\/]/g, '_')));
  }
}

async function launchElectron(
  opts: TargetOptions,
  work: string,
  workspace: string,
  userDataDir: string,
  extensionsDir: string,
): Promise<Target> {
  // Not a dependency here (it downloads VS Code, which this machine cannot):
  // `npm i -D @vscode/test-electron` where it can.
  const modName = '@vscode/test-electron';
  const te = (await import(modName)) as {
    downloadAndUnzipVSCode(version: string): Promise<string>;
    resolveCliArgsFromVSCodeExecutablePath(exe: string): string[];
  };
  const exe = await te.downloadAndUnzipVSCode(VSCODE_VERSION);
  const [cli, ...cliArgs] = te.resolveCliArgsFromVSCodeExecutablePath(exe);
  const inst = spawnSync(
    cli!,
    [...cliArgs, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', opts.vsix, '--force'],
    { encoding: 'utf8' },
  );
  if (inst.status !== 0) throw new Error(`installing the VSIX failed:\n${inst.stdout}\n${inst.stderr}`);
  const { _electron } = await import('playwright-core');
  const args = [
    workspace,
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    '--disable-workspace-trust',
    '--skip-welcome',
    '--skip-release-notes',
    '--disable-gpu',
    '--no-sandbox',
  ];
  let app = await _electron.launch({ executablePath: exe, args });
  let page = await app.firstWindow();
  await waitForWorkbench(page);
  const target: Target = {
    name: 'electron',
    page,
    async reload() {
      await app.close();
      app = await _electron.launch({ executablePath: exe, args });
      page = await app.firstWindow();
      target.page = page;
      await waitForWorkbench(page);
    },
    async close() {
      await app.close().catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
    log: () => '',
    keepLogs: (dir) => copyLogs(join(userDataDir, 'logs'), dir),
  };
  return target;
}
