/**
 * What the in-extension-host suite needs from the runner and from the
 * extension, plus small helpers.
 *
 * The extension's test surface (the value `activate()` returns, read here as
 * `extension.exports`) is described by `SplitpointTestApi`. It is deliberately
 * the webview protocol itself: the suite drives the host exactly the way the
 * webview does, and sees every message the webview would see.
 */
import * as vscode from 'vscode';
import { readFileSync } from 'node:fs';
import type { HostToWebview, ViewSnapshot, WebviewToHost } from '../../../src/protocol/messages';
import type { SettingsReport } from '../../../src/core/config/settings';
import type { SimHandle } from '../../sim';

export const EXTENSION_ID = 'splitpoint.splitpoint';

/** The extension's exports (see test/vscode/README.md, "The test API"). */
export interface SplitpointTestApi {
  /** Handles a message as if the webview had posted it (same validation, same code path). */
  receive(msg: WebviewToHost): Promise<void> | void;
  /**
   * Every host→webview message, whether or not the view is open. The listener counts as someone watching the view
   * (progress deltas, workers' streams read as often as for a visible view) unless `watches` is false.
   */
  onDidPost(listener: (msg: HostToWebview) => void, options?: { watches?: boolean }): vscode.Disposable;
  /** The snapshot the view would get now. */
  snapshot(): ViewSnapshot;
  /** The settings as the host read and validated them (core/config/settings readSettings). */
  settings(): SettingsReport;
}

/** Written by scripts/test-vscode.mjs; path in SPLITPOINT_VSCODE_TEST_CONFIG. */
export interface SuiteConfig {
  phase: 'main' | 'after-reload';
  files: string[];
  resultFile: string;
  eventsFile: string;
  /** Survives the reload: the main phase leaves notes here for the after-reload phase. */
  stateFile: string;
  userDataDir: string;
  workspace: string;
  repoRoot: string;
  timeoutMs: number;
  /** Whether index.ts starts the simulator in this extension host (default yes: the tests; the benchmarks start their own elsewhere). */
  inProcessSimulator?: boolean;
  grep?: string;
}

export function suiteConfig(): SuiteConfig {
  const p = process.env.SPLITPOINT_VSCODE_TEST_CONFIG;
  if (!p) throw new Error('SPLITPOINT_VSCODE_TEST_CONFIG is not set (run through scripts/test-vscode.mjs)');
  return JSON.parse(readFileSync(p, 'utf8')) as SuiteConfig;
}

/** The simulator the suite started in this extension host (see index.ts). */
export function sim(): SimHandle {
  const s = (globalThis as { __splitpointSim?: SimHandle }).__splitpointSim;
  if (!s) throw new Error('the suite simulator is not running');
  return s;
}

export function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not loaded in this extension host`);
  return ext;
}

const API_METHODS = ['receive', 'onDidPost', 'snapshot', 'settings'] as const;

/** Activates the extension and returns its test API, or fails naming what is missing. */
export async function api(): Promise<SplitpointTestApi> {
  const ext = extension();
  const exports = (ext.isActive ? ext.exports : await ext.activate()) as Partial<SplitpointTestApi> | undefined;
  const missing = API_METHODS.filter((m) => typeof exports?.[m] !== 'function');
  if (missing.length > 0) {
    throw new Error(
      `the extension's exports lack the test API (${missing.join(', ')}): activate() must return { receive, onDidPost, snapshot, settings } (test/vscode/README.md)`,
    );
  }
  const a = exports as SplitpointTestApi;
  // The host starts lazily, as on the view's first `ready`: do what the view does, and wait for the start it begins.
  await a.receive({ type: 'ready' });
  await waitFor('the host to start', () => {
    try {
      return a.snapshot();
    } catch {
      return undefined;
    }
  });
  return a;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await sleep(100);
  }
}

/** Records host→webview messages while a test runs. */
export class PostLog {
  readonly messages: HostToWebview[] = [];
  private readonly sub: vscode.Disposable;
  constructor(a: SplitpointTestApi) {
    this.sub = a.onDidPost((m) => this.messages.push(m));
  }
  of<T extends HostToWebview['type']>(type: T): Extract<HostToWebview, { type: T }>[] {
    return this.messages.filter((m): m is Extract<HostToWebview, { type: T }> => m.type === type);
  }
  waitFor<T extends HostToWebview['type']>(
    type: T,
    pred: (m: Extract<HostToWebview, { type: T }>) => boolean = () => true,
    timeoutMs = 20_000,
  ) {
    return waitFor(`a "${type}" message`, () => this.of(type).find(pred), timeoutMs);
  }
  dispose(): void {
    this.sub.dispose();
  }
}

/** Sets a user setting (ConfigurationTarget.Global) and waits a tick for the host to react. */
export async function setSetting(key: string, value: unknown): Promise<void> {
  const dot = key.indexOf('.');
  await vscode.workspace.getConfiguration(key.slice(0, dot)).update(key.slice(dot + 1), value, vscode.ConfigurationTarget.Global);
  await sleep(50);
}

/** A fresh session in the host, so tests don't see each other's messages. */
export async function newSession(a: SplitpointTestApi): Promise<string> {
  const before = a.snapshot().session.id;
  await vscode.commands.executeCommand('splitpoint.newSession');
  return waitFor('a new session', () => {
    const id = a.snapshot().session.id;
    return id !== before ? id : undefined;
  });
}

/**
 * Runs a command with an argument that replaces its UI prompt. If the command
 * opens its prompt anyway (it ignores the argument), the prompt would wait
 * forever: close it and fail after `timeoutMs`.
 */
export async function commandWithArg(id: string, arg: unknown, timeoutMs = 8_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      reject(new Error(`${id} did not finish within ${timeoutMs} ms: it should take its argument instead of prompting`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([vscode.commands.executeCommand(id, arg), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
