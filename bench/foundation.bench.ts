/**
 * Foundation benchmarks (issue 2). Run with `npm run bench -- foundation`.
 * Targets: incremental count of one new 2K-token message on a 200K-token
 * session ≤ 5 ms; `inspect` on a 1M-token session ≤ 3 s; activation does not
 * load the tokenizer.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredMessage } from '../src/core/messages';
import { importMessages } from '../src/core/session/importMessages';
import { loadTiktokenCounter } from '../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../src/core/tokens/tokenLedger';
import { generateSession } from '../test/fixtures/generateSession';
import { installFakeVscode } from '../test/unit/helpers/fakeVscode';
import { counterIds, fixedClock } from '../test/unit/helpers/memoryStorage';
import { median } from './stats';

const root = join(__dirname, '..');

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

async function incrementalCount(): Promise<void> {
  const ids = counterIds();
  const clock = fixedClock();
  const session = importMessages(generateSession({ seed: 11, targetChars: 820_000 }), ids, clock);
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const total = ledger.total(session);
  // New messages of ~2K tokens each, all distinct so nothing is cached.
  const source = importMessages(generateSession({ seed: 99, targetChars: 400_000 }), ids, clock).filter(
    (m) => (m.content ?? '').length > 9000,
  );
  const samples: number[] = [];
  let tokensPerMessage = 0;
  // The first counts also pay for JIT compilation of the encoder; they are reported apart.
  const WARMUP = 10;
  for (let i = 0; i < 40 + WARMUP; i++) {
    const base = source[i % source.length]!;
    const msg = { ...base, id: `new_${i}`, content: `${i}: ${(base.content ?? '').slice(0, 8200)}` } as StoredMessage;
    delete msg.tokens;
    const t0 = process.hrtime.bigint();
    const added = ledger.count(msg);
    const sessionTotal = ledger.total(session) + added;
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    tokensPerMessage = added;
    if (sessionTotal <= total) throw new Error('count did not grow');
  }
  const warm = samples.slice(WARMUP);
  console.log(`incremental count: session ${total} tokens, new message ≈${tokensPerMessage} tokens`);
  console.log(
    `  first ${WARMUP} new messages (JIT warming up): ${samples
      .slice(0, WARMUP)
      .map((x) => x.toFixed(1))
      .join(', ')} ms`,
  );
  console.log(
    `  next ${warm.length} (count + session total): median ${median(warm).toFixed(2)} ms, p90 ${pct(warm, 0.9).toFixed(2)} ms, ` +
      `max ${Math.max(...warm).toFixed(2)} ms  (target ≤ 5 ms)`,
  );
}

function inspectMillionTokens(): void {
  const dir = mkdtempSync(join(tmpdir(), 'sp-bench-'));
  const file = join(dir, 'million.json');
  writeFileSync(file, JSON.stringify(generateSession({ seed: 42, targetChars: 4_000_000 })));
  const runs: number[] = [];
  let totalTokens = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'inspect', '--session', file, '--json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    runs.push(Date.now() - t0);
    if (r.status !== 0) throw new Error(r.stderr);
    totalTokens = JSON.parse(r.stdout).totalTokens;
  }
  console.log(
    `inspect: ${(statSync(file).size / 1e6).toFixed(1)} MB file, ${totalTokens} tokens, whole process (node start, tokenizer load, parse, count, split, print)`,
  );
  console.log(`  wall: ${runs.map((r) => `${r} ms`).join(', ')}; median ${median(runs)} ms  (target ≤ 3000 ms)`);
}

function activation(): void {
  const bundle = join(root, 'dist', 'extension.js');
  const { uninstall } = installFakeVscode();
  const LOADS = Symbol.for('splitpoint.tokenizerLoads');
  const g = globalThis as Record<symbol, number | undefined>;
  const before = g[LOADS] ?? 0;
  try {
    const t0 = process.hrtime.bigint();
    const ext = require(bundle) as { activate(ctx: unknown): void };
    const loaded = Number(process.hrtime.bigint() - t0) / 1e6;
    const t1 = process.hrtime.bigint();
    ext.activate({ subscriptions: [], extensionUri: { path: '/ext', fsPath: '/ext' } });
    const activated = Number(process.hrtime.bigint() - t1) / 1e6;
    console.log(
      `activation: bundle ${(statSync(bundle).size / 1024).toFixed(0)} KB, require ${loaded.toFixed(1)} ms, ` +
        `activate() ${activated.toFixed(2)} ms, tokenizer loads during activation: ${(g[LOADS] ?? 0) - before}  (target 0)`,
    );
  } finally {
    uninstall();
  }
}

async function main(): Promise<void> {
  console.log(
    `# foundation benchmark — ${new Date().toISOString()} — node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
  );
  try {
    activation();
  } catch (err) {
    // The fake vscode API may lag behind the extension; the other figures do not depend on it.
    console.log(`activation: not measured (${(err as Error).message})`);
  }
  await incrementalCount();
  inspectMillionTokens();
}

void main();
