// Types for scripts/package.mjs (imported by test/unit/vsix.test.ts).
export function vsixName(root?: string): string;
export function shipsFromDist(name: string): boolean;
export function stageExtension(root?: string): string;
export function listZip(file: string): string[];
export function packageVsix(opts?: { root?: string; out?: string; build?: boolean; production?: boolean; quiet?: boolean }): {
  vsix: string;
  bytes: number;
};
