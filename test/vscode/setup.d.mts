// Types for setup.mjs.
export const CODE_SERVER_VERSION: string;
export const VSCODE_VERSION: string;
export const DEBIAN_PACKAGES: string[];
export const CHROMIUM: string;
export const CACHE_DIR: string;
export const CODE_SERVER_DIR: string;
export const CODE_SERVER_ENTRY: string;
export function missingDebianPackages(): string[];
export function codeServerInstalled(): boolean;
export function ensureVscode(opts?: { quiet?: boolean }): {
  codeServerEntry: string;
  codeServerDir: string;
  chromium: string;
  ms: number;
  changed: boolean;
};
