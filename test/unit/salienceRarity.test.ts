import assert from 'node:assert/strict';
import { cutText } from '../../src/core/compaction/toolCuts';
import { baseSalience, conversationSalience } from '../../src/core/fidelity/salience';
import type { ChatMessage } from '../../src/core/messages';
import { DEFAULT_PRETRIM, truncateLargeToolOutputs, truncateToolOutput } from '../../src/core/pretrim';
import { asst, toolPair, user } from './helpers/build';

const VERBS = ['parses', 'rejects', 'merges', 'flushes', 'orders', 'retries'];

/** An 800-line mocha log: a suite title every 40 lines, every other line a passing test. */
function testLog(seed: number): string[] {
  return Array.from({ length: 800 }, (_, k) =>
    k % 40 === 0 ? `  suite ${seed}.${k / 40}` : `    ✔ passes ${VERBS[(k + seed) % 6]} case ${seed}-${k} (${(k * 7) % 13}ms)`,
  );
}

const SETTING = 'config: QUANTUM_FLUX_LIMIT=7741 (read from .env.test)';
const FRAME = '    at Object.<anonymous> (src/db/pool.ts:88:13)';

/** Six test runs, as the reviewer's session: a setting deep in one log, a stack frame deep in another. */
function session(): ChatMessage[] {
  const logs = Array.from({ length: 6 }, (_, s) => testLog(s));
  logs[2]![449] = SETTING;
  logs[4]![430] = FRAME;
  return [user('Run the tests until they pass.'), ...logs.flatMap((l) => [...toolPair('run_command', l.join('\n')), asst('Next run.')])];
}

describe('salience: rare lines of a long output outrank its repeated ones', () => {
  it('a setting and a stack frame deep in long test logs survive the cut a compaction worker sees', () => {
    const ctx = session();
    const cut = ctx.map((_, i) => cutText(ctx, i));
    const setting = ctx.findIndex((m) => m.role === 'tool' && m.content.includes(SETTING));
    const frame = ctx.findIndex((m) => m.role === 'tool' && m.content.includes(FRAME));
    assert.match(cut[setting]!, /lines cut/, 'the log was cut (else the check proves nothing)');
    assert.ok(cut[setting]!.split('\n').includes(SETTING), 'the setting survives');
    assert.ok(cut[frame]!.split('\n').includes(FRAME), 'the stack frame survives');
    // The plain pre-trim (pretrim.ts, the target-block layout's context) keeps them too: the same scores.
    const trimmed = truncateLargeToolOutputs(ctx, DEFAULT_PRETRIM).messages;
    assert.equal(trimmed[setting]!.content, cut[setting]);
    assert.equal(trimmed[frame]!.content, cut[frame]);
  });

  it('scores a setting, a frame in the project, a path and a rare identifier above the hundredth passing test', () => {
    const lines = testLog(0);
    const rare = {
      setting: 'QUANTUM_FLUX_LIMIT=7741',
      yaml: '  maxPoolSize: 48',
      frame: FRAME,
      path: '  wrote coverage to reports/coverage/lcov.info',
      identifier: '  resolved symbol retryBudgetGate for the ingest stage',
    };
    Object.values(rare).forEach((l, k) => (lines[300 + 50 * k] = l));
    const ctx = [user('run'), ...toolPair('run_command', lines.join('\n')), asst('ok')];
    const score = conversationSalience(ctx)(2);
    const passing = score(lines[401]!);
    assert.ok(passing > 0, 'a passing test still counts for something');
    for (const [kind, line] of Object.entries(rare)) assert.ok(score(line) > passing, `${kind}: ${score(line)} vs ${passing}`);
  });

  it('a passing test alone in a log is worth as much as before, and an error line stays above all', () => {
    const lines = Array.from({ length: 600 }, (_, k) => `  step ${k} finished`);
    lines[300] = '  ✔ parses empty headers';
    lines[310] = 'QUANTUM_FLUX_LIMIT=7741';
    lines[320] = 'Error: connect ECONNREFUSED 10.0.0.7:5432';
    const ctx = [user('run'), ...toolPair('run_command', lines.join('\n')), asst('ok')];
    const score = conversationSalience(ctx)(2);
    assert.equal(score(lines[300]!), 2);
    assert.ok(score(lines[320]!) > score(lines[310]!) && score(lines[310]!) > score(lines[300]!));
  });

  it('repeated error lines rank below a single different one, and above every non-error line', () => {
    const lines = Array.from({ length: 600 }, (_, k) => (k % 3 === 0 ? `Error: ECONNRESET on attempt ${k}` : `  step ${k} finished`));
    lines[301] = 'TypeError: Cannot read properties of undefined (reading "pool")';
    lines[302] = 'QUANTUM_FLUX_LIMIT=7741';
    const ctx = [user('run'), ...toolPair('run_command', lines.join('\n')), asst('ok')];
    const score = conversationSalience(ctx)(2);
    assert.ok(score(lines[301]!) > score(lines[0]!), 'the one TypeError above the 200 resets');
    assert.ok(score(lines[0]!) > score(lines[302]!), 'a repeated error still above a setting');
  });

  it('recognises settings, and not comparisons, arrows or prose', () => {
    for (const line of [
      'timeout=30',
      'export DATABASE_URL=postgres://db.intern:5432/app',
      '  --max-old-space-size=4096',
      '  "retries": 5,',
      '  pool.max_size: 48',
      'config: verbose logging',
      'CONFIG: cache enabled',
    ])
      assert.equal(baseSalience(line), 3, line);
    for (const line of ['if (a == b) return', 'items.map((x) => x.id)', 'Note: this is prose', 'Done: all good', 'x >= y'])
      assert.ok(baseSalience(line) < 3, `${line}: ${baseSalience(line)}`);
  });

  it('a stack frame in the runtime or a dependency counts less than one in the project', () => {
    assert.equal(baseSalience('    at Object.<anonymous> (src/db/pool.ts:88:13)'), 3);
    assert.equal(baseSalience('    at /app/src/db/pool.js:88:13'), 3);
    assert.equal(baseSalience('\tat com.acme.db.Pool.acquire(Pool.java:88)'), 3);
    assert.equal(baseSalience('  File "app/db/pool.py", line 88, in acquire'), 3);
    assert.equal(baseSalience('    at Module._compile (node:internal/modules/cjs/loader:1105:14)'), 1);
    assert.equal(baseSalience('    at Pool.connect (/app/node_modules/pg-pool/index.js:45:11)'), 1);
  });

  it('the cut is the same whichever conversation and pre-trim path computes it', () => {
    const ctx = session();
    const fresh = conversationSalience(ctx);
    ctx.forEach((m, i) => {
      if (m.role !== 'tool') return;
      assert.equal(cutText(ctx, i), truncateToolOutput(m, DEFAULT_PRETRIM, fresh(i)).message.content, `message ${i}`);
    });
  });
});
