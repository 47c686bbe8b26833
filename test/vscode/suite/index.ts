/**
 * The extension-tests module: VS Code's extension host (desktop via
 * @vscode/test-electron, or code-server's through the web payload) calls
 * `run()`. For the tests it starts the simulator in this process and points
 * the extension at it (the benchmarks start their own in another), runs mocha over the bundled test files, and reports every result to the
 * runner through files named in the config (NDJSON events while it runs, a
 * JSON summary at the end), because the extension host's stdout is not ours.
 */
import * as vscode from 'vscode';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { startSimulator } from '../../sim';
import agentScript from '../fixtures/agent-script.json';
import { suiteConfig, type SuiteConfig } from './api';

type MochaCtor = typeof import('mocha');

interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  ms: number;
  error?: string;
}

function makeReporter(Mocha: MochaCtor, cfg: SuiteConfig, results: TestResult[]) {
  const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;
  const emit = (r: TestResult) => {
    results.push(r);
    appendFileSync(cfg.eventsFile, JSON.stringify(r) + '\n');
  };
  return class SuiteReporter extends Mocha.reporters.Base {
    constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
      super(runner, options);
      runner.on(EVENT_TEST_PASS, (t) => emit({ title: t.fullTitle(), state: 'passed', ms: t.duration ?? 0 }));
      runner.on(EVENT_TEST_PENDING, (t) => emit({ title: t.fullTitle(), state: 'pending', ms: 0 }));
      runner.on(EVENT_TEST_FAIL, (t, err: Error) =>
        emit({ title: t.fullTitle(), state: 'failed', ms: t.duration ?? 0, error: (err && (err.stack || err.message)) || String(err) }),
      );
    }
  };
}

export async function run(): Promise<void> {
  const cfg = suiteConfig();
  mkdirSync(dirname(cfg.resultFile), { recursive: true });
  writeFileSync(cfg.eventsFile, '');
  const results: TestResult[] = [];
  const started = Date.now();
  let fatal: string | undefined;
  const sim =
    cfg.inProcessSimulator !== false
      ? await startSimulator({ port: 0, timeScale: 0.02, script: agentScript, summaryTokens: 120 })
      : undefined;
  (globalThis as { __splitpointSim?: unknown }).__splitpointSim = sim;
  try {
    // Before anything activates the extension: its endpoint is this simulator.
    if (sim) await vscode.workspace.getConfiguration('splitpoint').update('endpoint', sim.url, vscode.ConfigurationTarget.Global);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Mocha = require('mocha') as MochaCtor;
    const mocha = new Mocha({ ui: 'bdd', timeout: cfg.timeoutMs, color: false, reporter: makeReporter(Mocha, cfg, results) as never });
    if (cfg.grep) mocha.grep(cfg.grep);
    for (const f of cfg.files) mocha.addFile(f);
    await new Promise<void>((resolve) => mocha.run(() => resolve()));
  } catch (err) {
    fatal = err instanceof Error ? (err.stack ?? err.message) : String(err);
  } finally {
    await sim?.close().catch(() => {});
  }
  const count = (s: TestResult['state']) => results.filter((r) => r.state === s).length;
  writeFileSync(
    cfg.resultFile,
    JSON.stringify(
      {
        phase: cfg.phase,
        passed: count('passed'),
        failed: count('failed') + (fatal ? 1 : 0),
        pending: count('pending'),
        ms: Date.now() - started,
        fatal: fatal ?? null,
        vscode: vscode.version,
        tests: results,
      },
      null,
      2,
    ),
  );
}
