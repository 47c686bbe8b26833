// Types for test-vscode.mjs (imported by the TypeScript benchmark bench/hostCpu.bench.ts).
export interface SuiteTotals {
  passed: number;
  failed: number;
  pending: number;
  tests: Array<{ title: string; state: 'passed' | 'failed' | 'pending'; ms: number; error?: string; phase: string }>;
}
export function runHostSuite(opts?: {
  log?: (line: string) => void;
  grep?: string;
  timeoutMs?: number;
  suffix?: '.test.ts' | '.bench.ts';
  /** User settings the code-server profile starts with. */
  settings?: Record<string, unknown>;
}): Promise<SuiteTotals>;
