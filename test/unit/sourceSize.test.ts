import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');
const MAX_LINES = 400;
const MAX_LINE_CHARS = 160;

/*
 * ALLOW-LISTS FOR THE COORDINATOR TO EMPTY. Files another helper is splitting
 * or editing right now; the comment names who. Remove an entry once its file
 * passes; when both lists are empty, delete them.
 */

/** Files still over 400 lines. */
const OVER_400_LINES: ReadonlySet<string> = new Set([
  'src/llm/client.ts', // HARDENING splits it
  'src/core/compaction/pendingCompaction.ts', // PLANNER splits it
]);

/**
 * Files with lines over 160 characters. Most are code lines that the
 * coordinator's `prettier --write .` (printWidth 140) wraps; the rest are long
 * string literals to break by hand after that pass.
 */
const LONG_LINES: ReadonlySet<string> = new Set([
  // Unowned or shared; wrapped by the formatting pass.
  'src/cli/benchCommand.ts',
  'src/cli/compactCommand.ts',
  'src/cli/inspectCommand.ts',
  'src/cli/runCommand.ts',
  'src/core/compaction/checks.ts',
  'src/core/compaction/compactionOutput.ts',
  'src/core/compaction/events.ts',
  'src/core/compaction/merge.ts',
  'src/core/compaction/pendingCompaction.ts', // PLANNER
  'src/core/compaction/plan.ts', // PLANNER
  'src/core/compaction/prompts.ts',
  'src/core/compaction/workerPrompt.ts',
  'src/core/config/settings.ts',
  'src/core/overflowError.ts',
  'src/core/session/sessionState.ts', // COUNTING
  'src/core/agent/judge.ts', // COUNTING
  'src/core/perf/planner.ts', // PLANNER
  'src/core/perf/stepSim.ts', // PLANNER
  'src/core/fidelity/extract.ts', // FIDELITY
  'src/core/fidelity/patterns.ts', // FIDELITY
  'src/core/fidelity/plant.ts', // FIDELITY
  'src/core/fidelity/probes.ts', // FIDELITY
  'src/core/fidelity/reach.ts', // FIDELITY
  'src/core/fidelity/select.ts', // FIDELITY
  'src/host/tools/workspaceTools.ts', // HARDENING
  'src/host/onboarding/checkCommand.ts', // UI
  'src/host/onboarding/connectionCheck.ts', // UI
  'src/host/review/fidelityLoss.ts', // UI
  'src/host/review/reviewBridge.ts', // UI
  'webview/review/main.ts', // UI
  'webview/review/overview.ts', // UI
  'webview/review/row.ts', // UI
  'webview/views/overview.ts', // UI
  // REFACTOR's, left to the formatting pass so the UI helper's concurrent edits of these views merge cleanly.
  'webview/markdown.ts',
  'webview/views/chat.ts',
  'webview/views/chatMessage.ts',
  'webview/views/compaction.ts',
  'webview/views/composer.ts',
  'webview/views/gauges.ts',
  'webview/views/header.ts',
  'webview/views/pins.ts',
]);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'webview'))].map((f) => ({
  path: relative(root, f).split('\\').join('/'),
  lines: readFileSync(f, 'utf8').split('\n'),
}));
const lineCount = (lines: string[]) => (lines.at(-1) === '' ? lines.length - 1 : lines.length);

describe('source files have one job: size limits', () => {
  it('finds the sources (a walk that silently found nothing would pass)', () => {
    assert.ok(files.length > 100, `only ${files.length} files`);
    assert.ok(files.some((f) => f.path === 'src/host/host.ts'));
  });

  it(`no file in src/ or webview/ is over ${MAX_LINES} lines`, () => {
    const over = files
      .filter((f) => lineCount(f.lines) > MAX_LINES && !OVER_400_LINES.has(f.path))
      .map((f) => `${f.path}: ${lineCount(f.lines)}`);
    assert.deepEqual(over, []);
  });

  it(`no line in src/ or webview/ is over ${MAX_LINE_CHARS} characters`, () => {
    const long = files.flatMap((f) =>
      LONG_LINES.has(f.path) ? [] : f.lines.flatMap((l, i) => (l.length > MAX_LINE_CHARS ? [`${f.path}:${i + 1} (${l.length})`] : [])),
    );
    assert.deepEqual(long, []);
  });
});
