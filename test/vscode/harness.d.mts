// Types for harness.mjs (imported by the TypeScript e2e suite).
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import type { ChildProcess } from 'node:child_process';

export const ROOT: string;
export const EXTENSION_ID: string;
export const CHROMIUM_ARGS: string[];
export function freePort(): Promise<number>;
export function tempDir(prefix: string): string;
export function startSim(opts?: Record<string, unknown>): Promise<import('../sim').SimHandle>;
export function writeUserSettings(userDataDir: string, settings?: Record<string, unknown>): void;
export function machineScoped(settings: Record<string, unknown>): Record<string, unknown>;
export function installVsix(vsix: string, dirs: { userDataDir: string; extensionsDir: string }): void;
export interface CodeServer {
  url: string;
  port: number;
  proc: ChildProcess;
  output(): string;
  close(): Promise<void>;
}
export function startCodeServer(opts: {
  folder?: string;
  userDataDir: string;
  extensionsDir: string;
  port?: number;
  env?: Record<string, string>;
  log?: (line: string) => void;
  timeoutMs?: number;
}): Promise<CodeServer>;
export function killGroup(proc: ChildProcess, signal?: NodeJS.Signals): void;
export function workbenchUrl(
  base: string,
  opts?: { folder?: string; extensionDevelopmentPath?: string; extensionTestsPath?: string },
): string;
export function launchBrowser(opts?: { headless?: boolean }): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }>;
export function waitForWorkbench(page: Page, timeoutMs?: number): Promise<void>;
export function findFrame(page: Page, make: (f: Frame) => Locator, opts?: { timeoutMs?: number }): Promise<Frame>;
export function readJsonIfExists(p: string): unknown;
